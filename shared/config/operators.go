package config

import (
	"fmt"
	"regexp"
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

// principalARN is an IAM account root, role or user ARN in any partition.
var principalARN = regexp.MustCompile(`^arn:aws(-[a-z]+)*:iam::[0-9]{12}:(root|role/[A-Za-z0-9+=,.@_/-]{1,512}|user/[A-Za-z0-9+=,.@_/-]{1,512})$`)

func (o Operators) validate(p *problems) {
	seen := map[string]bool{}
	for i, a := range o.Principals {
		field := fmt.Sprintf("operators.principals[%d]", i)
		switch {
		case !principalARN.MatchString(a):
			p.add(field, "%q is not an IAM principal ARN; use arn:aws:iam::<account id>:root, arn:aws:iam::<account id>:role/<name> or arn:aws:iam::<account id>:user/<name>", a)
		case seen[a]:
			p.add(field, "%q is listed twice; list each principal once", a)
		}
		seen[a] = true
	}
}
