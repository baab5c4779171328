package config

import (
	"fmt"
	"strings"
)

// Operators are who may assume the stack's operator role: the one
// principal, besides SNS and the lanes' own functions, that may send to a
// lane's queue, so the only one that can inject a signed delivery or set
// the replay attribute that makes the deliverer send an event again
// (ops redrive, ops replay, a console DLQ redrive).
type Operators struct {
	// Principals are IAM ARNs (arn:aws:iam::<account>:root, :role/…,
	// :user/…) that may assume the role. Empty: the deploying account's
	// root, so any principal of the account whose own IAM policy allows
	// sts:AssumeRole on the role.
	Principals []string `json:"principals,omitempty"`
}

// principalARN reports whether s is an IAM account root, role or user ARN
// in any partition: arn:aws[-…]:iam::<12 digits>:root, :role/<path and
// name> or :user/<path and name>.
func principalARN(s string) bool {
	parts := strings.SplitN(s, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "iam" || parts[3] != "" || len(parts[4]) != 12 || strings.Trim(parts[4], "0123456789") != "" {
		return false
	}
	if p := parts[1]; p != "aws" && (!strings.HasPrefix(p, "aws-") || strings.Trim(p[4:], "abcdefghijklmnopqrstuvwxyz-") != "" || len(p) == 4) {
		return false
	}
	res := parts[5]
	if res == "root" {
		return true
	}
	name, ok := strings.CutPrefix(res, "role/")
	if !ok {
		name, ok = strings.CutPrefix(res, "user/")
	}
	const allowed = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+=,.@_/-"
	return ok && len(name) >= 1 && len(name) <= 512 && strings.Trim(name, allowed) == ""
}

func (o Operators) validate(p *problems) {
	seen := map[string]bool{}
	for i, a := range o.Principals {
		field := fmt.Sprintf("operators.principals[%d]", i)
		switch {
		case !principalARN(a):
			p.add(field, "%q is not an IAM principal ARN; use arn:aws:iam::<account id>:root, arn:aws:iam::<account id>:role/<name> or arn:aws:iam::<account id>:user/<name>", a)
		case seen[a]:
			p.add(field, "%q is listed twice; list each principal once", a)
		}
		seen[a] = true
	}
}
