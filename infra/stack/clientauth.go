package stack

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"

	"github.com/hookfan/hookfan/shared/config"
)

// grantClientAuthSecrets lets the lane's function read the secrets of its
// destination's tls (client certificate, CA) and auth.oauth2 (client id
// and secret) sections, each by the name the function reads it by, and no
// other: a secret a header or the URL already reads is granted once.
func (l *Lane) grantClientAuthSecrets(d config.Destination) {
	l.ClientAuthSecrets = map[string]awssecretsmanager.ISecret{}
	for i, name := range append(d.TLSSecrets(), d.OAuth2Secrets()...) {
		if _, ok := l.ClientAuthSecrets[name]; ok {
			continue
		}
		if s, ok := l.HeaderSecrets[name]; ok {
			l.ClientAuthSecrets[name] = s
			continue
		}
		if name == d.URLSecretName && l.URLSecret != nil {
			l.ClientAuthSecrets[name] = l.URLSecret
			continue
		}
		s := importSecret(l.Construct, fmt.Sprintf("ClientAuthSecret%d", i), name)
		s.GrantRead(l.Role, nil)
		l.ClientAuthSecrets[name] = s
	}
}
