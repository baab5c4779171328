package config

import (
	"regexp"
	"testing"
)

// The regular expressions the syntax checks replace, kept here as their
// oracle.
var (
	namePattern       = regexp.MustCompile(`^[a-z0-9-]{1,64}$`)
	secretNamePattern = regexp.MustCompile(`^([A-Za-z0-9/_+=.@-]{1,512}|arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[A-Za-z0-9/_+=.@-]+)$`)
	headerPattern     = regexp.MustCompile("^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$")
	fieldPathPattern  = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)
)

var syntaxSeeds = []string{
	"", "a", "stripe", "orders-eu-1", "Orders", "a b", "-", string(make([]byte, 65)),
	"hookfan/sources/stripe", "hookfan/dest@1+x=y.z_w-v", "arn:aws:secretsmanager:eu-west-1:123456789012:secret:shopify-AbCdEf",
	"arn:aws-us-gov:secretsmanager:us-gov-west-1:123456789012:secret:x", "arn:aws:secretsmanager:eu-west-1:12345678901:secret:x",
	"arn:aws:secretsmanager:eu-west-1:123456789012:secret:", "arn:aws:secretsmanager::123456789012:secret:x",
	"arn:aws:sns:eu-west-1:123456789012:secret:x", "arn:awsX:secretsmanager:eu-west-1:123456789012:secret:x",
	"arn:aws:secretsmanager:eu-west-1:123456789012:secret:a:b", "X-Signature", "x_sig!", "X:Sig", "a.b", "data.id",
	"data..id", ".id", "id.", "é", "a\x00", "arn:aws:secretsmanager:EU:123456789012:secret:x",
}

func checkSyntax(t *testing.T, s string) {
	t.Helper()
	for _, c := range []struct {
		name string
		re   *regexp.Regexp
		fn   func(string) bool
	}{
		{"isName", namePattern, isName},
		{"isSecretName", secretNamePattern, isSecretName},
		{"isHeaderName", headerPattern, isHeaderName},
		{"isFieldPath", fieldPathPattern, isFieldPath},
	} {
		if got, want := c.fn(s), c.re.MatchString(s); got != want {
			t.Errorf("%s(%q) = %v, the regular expression says %v", c.name, s, got, want)
		}
	}
}

func TestSyntaxMatchesRegexp(t *testing.T) {
	long := make([]byte, 512)
	for i := range long {
		long[i] = 'a'
	}
	for _, s := range append(syntaxSeeds, string(long), string(long)+"a", string(long[:128]), string(long[:129])) {
		checkSyntax(t, s)
	}
}

func FuzzSyntaxMatchesRegexp(f *testing.F) {
	for _, s := range syntaxSeeds {
		f.Add(s)
	}
	f.Fuzz(checkSyntax)
}
