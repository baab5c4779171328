package cost

import (
	"strconv"

	"github.com/hookfan/hookfan/shared/secrets"
)

// What a destination's tls (a client certificate secret, a CA secret, or
// both) and OAuth 2.0 client credentials
// (auth.oauth2: one client secret) add: each secret's monthly price, and
// its reads by a warm deliver function, once per secrets-cache TTL. The
// token endpoint is the identity provider's and bills nothing on AWS; a
// token call is an outbound request of a few hundred bytes per token
// lifetime, within the data out already priced.

// SecretCallsUSDPer10k is Secrets Manager's price of API calls.
const SecretCallsUSDPer10k = 0.05

// SecretReadsPerMonth are one warm function's reads of one secret a month:
// one per cache TTL.
func SecretReadsPerMonth() float64 {
	return Assumed.MonthSeconds.Value / secrets.DefaultTTL.Seconds()
}

// ClientAuthSecretFixed is what one tls or auth.oauth2 secret adds to a
// lane a month with one warm deliver function (each further warm
// function adds its reads).
func ClientAuthSecretFixed() float64 {
	return Prices.Secret.USD + SecretReadsPerMonth()/1e4*SecretCallsUSDPer10k
}

// ClientAuthFixed is what a lane's mutual TLS with a private CA and OAuth
// 2.0 (three secrets) add a month.
func ClientAuthFixed() (mtls, mtlsWithCA, oauth2 float64) {
	one := ClientAuthSecretFixed()
	return one, 2 * one, one
}

// clientAuthLine is the cost page's sentence on tls and auth.oauth2.
func clientAuthLine() string {
	mtls, ca, oauth := ClientAuthFixed()
	return "With `tls` on a destination: " + usd(mtls) + " a month for each secret it names (a `clientCertificateSecret` or a `caSecret` alone, read once per " +
		strconv.Itoa(int(secrets.DefaultTTL.Minutes())) + "-minute cache TTL by each warm deliver function), " + usd(ca) + " with both; with `auth.oauth2`: " +
		usd(oauth) + " a month (the client's secret; the token endpoint is the identity provider's)."
}
