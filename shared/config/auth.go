package config

import (
	"fmt"
	"slices"
	"strings"
)

// Auth is how a destination's requests authenticate beyond their Standard
// Webhooks signature, which every delivery still carries. At most one kind
// is set.
type Auth struct {
	// SigV4 signs each request with the lane role's AWS credentials
	// (Signature Version 4): for API Gateway routes with IAM
	// authorization, Lambda function URLs with AWS_IAM auth and VPC
	// Lattice services with IAM auth policies.
	SigV4 *SigV4 `json:"sigv4,omitempty"`
	// OAuth2 gets a bearer token with the OAuth 2.0 client credentials
	// grant and sends it in the Authorization header of every delivery
	// (oauth2.go).
	OAuth2 *OAuth2 `json:"oauth2,omitempty"`
}

// SigV4 names what a SigV4 signature is scoped to.
type SigV4 struct {
	// Service is the signing name of the receiving service:
	// "execute-api" (API Gateway), "lambda" (function URLs),
	// "vpc-lattice-svcs" (VPC Lattice).
	Service string `json:"service"`
	// Region is the receiver's region, such as "eu-west-1".
	Region string `json:"region"`
	// Resources are receivers the lane role may invoke by an identity
	// policy of its own: an API Gateway route's execute-api ARN, a Lambda
	// function's ARN (its URL). Needed for a receiver in another account,
	// where AWS wants the caller's identity policy beside the resource
	// policy, and for an HTTP API, which has no resource policy. Exact
	// ARNs only: no wildcard.
	Resources []string `json:"resources,omitempty"`
}

// MaxSigV4Resources bounds auth.sigv4.resources.
const MaxSigV4Resources = 10

// InvokeActions are the IAM actions auth.sigv4.resources grant the lane
// role for service; nil for a service whose resources are not supported.
func InvokeActions(service string) []string {
	switch service {
	case SigV4ServiceAPIGateway:
		return []string{"execute-api:Invoke"}
	case SigV4ServiceLambda:
		// Function URLs created since October 2025 want both.
		return []string{"lambda:InvokeFunctionUrl", "lambda:InvokeFunction"}
	}
	return nil
}

// SigV4Services are the signing names auth.sigv4.service accepts: the
// receivers the docs describe. Any other name would turn a sender's body
// into a signed call to an AWS API with the lane's role (a mistyped lane
// pointed at sqs or dynamodb), so another receiver is added here on
// request, with its docs, not by configuration.
var SigV4Services = []string{SigV4ServiceAPIGateway, SigV4ServiceLambda, SigV4ServiceLattice}

// isAWSRegion reports whether s has a region's shape: two letters, one or
// more lowercase words, and a number of one or two digits, joined by
// hyphens (eu-west-1, us-gov-west-1, ap-southeast-3).
func isAWSRegion(s string) bool {
	parts := strings.Split(s, "-")
	if len(parts) < 3 || len(parts[0]) != 2 {
		return false
	}
	last := parts[len(parts)-1]
	if len(last) < 1 || len(last) > 2 {
		return false
	}
	for i := 0; i < len(last); i++ {
		if last[i] < '0' || last[i] > '9' {
			return false
		}
	}
	for _, w := range parts[:len(parts)-1] {
		if w == "" {
			return false
		}
		for i := 0; i < len(w); i++ {
			if w[i] < 'a' || w[i] > 'z' {
				return false
			}
		}
	}
	return true
}

// sigv4Headers are set by the SigV4 signer: a destination's own headers
// may not set them.
var sigv4Headers = []string{"authorization", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256"}

// Signing names of the receivers the docs describe.
const (
	SigV4ServiceAPIGateway = "execute-api"
	SigV4ServiceLambda     = "lambda"
	SigV4ServiceLattice    = "vpc-lattice-svcs"
)

// SigV4 returns the destination's SigV4 settings, nil when it is not signed.
func (d Destination) SigV4() *SigV4 {
	if d.Auth == nil {
		return nil
	}
	return d.Auth.SigV4
}

func (d *Destination) validateAuth(p *problems, at string) {
	if d.Auth == nil {
		return
	}
	headersAt := at + ".headers"
	at += ".auth"
	a := d.Auth
	var kinds []string
	if a.SigV4 != nil {
		kinds = append(kinds, "sigv4")
	}
	if a.OAuth2 != nil {
		kinds = append(kinds, "oauth2")
	}
	switch {
	case len(kinds) == 0:
		p.add(at, "names no kind of authentication; set sigv4 ({\"service\": \"execute-api\", \"region\": \"eu-west-1\"}) or oauth2 ({\"tokenUrl\": \"…\", \"clientSecret\": \"…\"}), or remove auth")
		return
	case len(kinds) > 1:
		p.add(at, "sets %s; keep exactly one kind of authentication", strings.Join(kinds, " and "))
		return
	case a.SigV4 == nil:
		return
	}
	s := a.SigV4
	at += ".sigv4"
	if !slices.Contains(SigV4Services, s.Service) {
		p.add(at+".service", "%q is not a receiver Hookfan signs for; use execute-api (API Gateway), lambda (Lambda function URLs) or vpc-lattice-svcs (VPC Lattice); to sign for another service, open an issue naming it and the receiver it fronts", s.Service)
	}
	if !isAWSRegion(s.Region) {
		p.add(at+".region", "%q is not an AWS region; use the receiver's region, such as eu-west-1 or us-east-1", s.Region)
	}
	s.validateResources(p, at+".resources")
	for i, h := range d.Headers {
		for _, name := range sigv4Headers {
			if strings.EqualFold(h.Name, name) {
				p.add(fmt.Sprintf("%s[%d].name", headersAt, i),
					"%q cannot be set on a destination with auth.sigv4: the SigV4 signer sets it; remove the header (the receiver authenticates the lane's role)", h.Name)
			}
		}
	}
}

// validateResources checks auth.sigv4.resources: exact ARNs of the
// signing service's receivers.
func (s *SigV4) validateResources(p *problems, at string) {
	if len(s.Resources) == 0 {
		return
	}
	if InvokeActions(s.Service) == nil {
		p.add(at, "is set for service %q; resources are granted for %s and %s only (a VPC Lattice auth policy names the role itself)", s.Service, SigV4ServiceAPIGateway, SigV4ServiceLambda)
		return
	}
	if len(s.Resources) > MaxSigV4Resources {
		p.add(at, "has %d ARNs; use at most %d", len(s.Resources), MaxSigV4Resources)
	}
	for i, arn := range s.Resources {
		if why := invokeARNProblem(s.Service, arn); why != "" {
			p.add(fmt.Sprintf("%s[%d]", at, i), "%q %s", arn, why)
		}
	}
}

// invokeARNProblem says why arn is not an exact receiver of service, or "".
func invokeARNProblem(service, arn string) string {
	f := strings.SplitN(arn, ":", 6)
	example := map[string]string{
		SigV4ServiceAPIGateway: "arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/prod/POST/hooks",
		SigV4ServiceLambda:     "arn:aws:lambda:eu-west-1:123456789012:function:receiver",
	}[service]
	switch {
	case strings.ContainsAny(arn, "*?"):
		return "holds a wildcard; name the exact route or function (" + example + ")"
	case len(f) != 6 || f[0] != "arn" || (f[1] != "aws" && f[1] != "aws-cn" && f[1] != "aws-us-gov"):
		return "is not an ARN; use " + example
	case f[2] != service:
		return fmt.Sprintf("is a %s ARN, not one of service %s; use %s", f[2], service, example)
	case !isAWSRegion(f[3]) || len(f[4]) != 12 || strings.Trim(f[4], "0123456789") != "":
		return "has no region or 12-digit account; use " + example
	case service == SigV4ServiceAPIGateway && strings.Count(f[5], "/") < 3:
		return "is not a route (api-id/stage/METHOD/path); use " + example
	case service == SigV4ServiceLambda && !strings.HasPrefix(f[5], "function:"):
		return "is not a function; use " + example
	}
	return ""
}
