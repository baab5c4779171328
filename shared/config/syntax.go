package config

import "strings"

// The syntax checks of names, secret ids, header names and field paths.
// They are plain loops rather than regular expressions: every function
// validates its configuration at start, and compiling the expressions
// (one with a {1,512} repetition) cost more than the rest of a cold start's
// package initialisation together.

// isName accepts source and destination names: 1 to 64 of [a-z0-9-].
func isName(s string) bool {
	return len(s) >= 1 && len(s) <= 64 && all(s, func(c byte) bool { return lower(c) || digit(c) || c == '-' })
}

// isSecretName accepts a Secrets Manager name (1 to 512 of
// [A-Za-z0-9/_+=.@-]) or a secret ARN
// (arn:aws[a-z-]*:secretsmanager:<region>:<12 digits>:secret:<name>).
func isSecretName(s string) bool {
	if len(s) >= 1 && len(s) <= 512 && all(s, secretChar) {
		return true
	}
	parts := strings.SplitN(s, ":", 7)
	if len(parts) != 7 {
		return false
	}
	partition, service, region, account, kind, name := parts[1], parts[2], parts[3], parts[4], parts[5], parts[6]
	return parts[0] == "arn" &&
		strings.HasPrefix(partition, "aws") && all(partition[3:], func(c byte) bool { return lower(c) || c == '-' }) &&
		service == "secretsmanager" &&
		region != "" && all(region, func(c byte) bool { return lower(c) || digit(c) || c == '-' }) &&
		len(account) == 12 && all(account, digit) &&
		kind == "secret" &&
		name != "" && all(name, secretChar)
}

// isHeaderName accepts an HTTP field name of 1 to 128 token characters
// (RFC 9110 §5.6.2).
func isHeaderName(s string) bool {
	return len(s) >= 1 && len(s) <= 128 && all(s, func(c byte) bool {
		return lower(c) || upper(c) || digit(c) || strings.IndexByte("!#$%&'*+.^_`|~-", c) >= 0
	})
}

// isFieldPath accepts a dot-separated path of [A-Za-z0-9_-]+ names.
func isFieldPath(s string) bool {
	for part := range strings.SplitSeq(s, ".") {
		if part == "" || !all(part, func(c byte) bool { return lower(c) || upper(c) || digit(c) || c == '_' || c == '-' }) {
			return false
		}
	}
	return true
}

func secretChar(c byte) bool {
	return lower(c) || upper(c) || digit(c) || strings.IndexByte("/_+=.@-", c) >= 0
}

func all(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func lower(c byte) bool { return c >= 'a' && c <= 'z' }
func upper(c byte) bool { return c >= 'A' && c <= 'Z' }
func digit(c byte) bool { return c >= '0' && c <= '9' }
