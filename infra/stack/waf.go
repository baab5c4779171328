package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awswafv2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/config"
)

// CommonRuleSet is the AWS managed rule group the web ACL applies.
const CommonRuleSet = "AWSManagedRulesCommonRuleSet"

// CountedCommonRules are the common rule set's rules that only count in
// the web ACL instead of blocking. They all inspect the body, which for a
// webhook is the provider's signed payload: free text written by its users
// (commit messages, product descriptions, chat messages) that trips
// cross-site-scripting, path-traversal and SSRF patterns, and is often
// larger than SizeRestrictions_BODY's 8 KB. Ingest never interprets it
// beyond its signature and a few JSON fields, and a blocked webhook is
// an event lost once the provider stops retrying. The rules on the URI,
// query string and headers keep blocking.
var CountedCommonRules = []string{
	"SizeRestrictions_BODY",
	"CrossSiteScripting_BODY",
	"GenericLFI_BODY",
	"GenericRFI_BODY",
	"EC2MetaDataSSRF_BODY",
}

// WebACLProps configures the web ACL.
type WebACLProps struct {
	// Config supplies the per-IP limit and each source's allow-list (required).
	Config *config.Config
	// StageArn is the REST API stage to protect (required).
	StageArn *string
}

// WebACL is a regional AWS WAF web ACL associated with the ingest stage.
// Its rules, in order:
//
//  1. one per source with limits.allowedIps: a request to that source's
//     path from any other address is blocked;
//  2. a per-IP rate rule over five minutes, which the allow-listed
//     addresses skip (a provider's few senders carry all its traffic);
//  3. AWS's common rule set, its body rules set to count (CountedCommonRules).
//
// Everything else is allowed, to be verified by ingest.
type WebACL struct {
	constructs.Construct
	ACL         awswafv2.CfnWebACL
	Association awswafv2.CfnWebACLAssociation
	// IPSets are each allow-listed source's IP sets (IPv4, IPv6 or both).
	IPSets map[string][]awswafv2.CfnIPSet
}

// NewWebACL builds the web ACL and associates it with the stage.
func NewWebACL(scope constructs.Construct, id string, props *WebACLProps) *WebACL {
	w := &WebACL{Construct: constructs.NewConstruct(scope, jsii.String(id)), IPSets: map[string][]awswafv2.CfnIPSet{}}
	cfg := props.Config
	prefix := *awscdk.Stack_Of(w.Construct).StackName() + "-"
	visibility := func(name string) *awswafv2.CfnWebACL_VisibilityConfigProperty {
		return &awswafv2.CfnWebACL_VisibilityConfigProperty{
			CloudWatchMetricsEnabled: jsii.Bool(true),
			MetricName:               jsii.String(prefix + name),
			SampledRequestsEnabled:   jsii.Bool(true),
		}
	}

	var rules []any
	var allowed []any // every allow-list's IP set statements
	for _, s := range cfg.Sources {
		v4, v6 := s.Limits.AllowedBlocks()
		if len(v4)+len(v6) == 0 {
			continue
		}
		var match []any
		for _, family := range []struct {
			version, suffix string
			blocks          []string
		}{{"IPV4", "V4", v4}, {"IPV6", "V6", v6}} {
			if len(family.blocks) == 0 {
				continue
			}
			set := awswafv2.NewCfnIPSet(w.Construct, jsii.String("AllowList"+outputID(s.Name)+family.suffix), &awswafv2.CfnIPSetProps{
				Scope:            jsii.String("REGIONAL"),
				IpAddressVersion: jsii.String(family.version),
				Addresses:        jsii.Strings(family.blocks...),
				Description:      jsii.String("Hookfan: addresses allowed to post to source " + s.Name),
			})
			w.IPSets[s.Name] = append(w.IPSets[s.Name], set)
			match = append(match, &awswafv2.CfnWebACL_StatementProperty{
				IpSetReferenceStatement: &awswafv2.CfnWebACL_IPSetReferenceStatementProperty{Arn: set.AttrArn()},
			})
		}
		allowed = append(allowed, match...)
		rules = append(rules, &awswafv2.CfnWebACL_RuleProperty{
			Name:     jsii.String("AllowList-" + s.Name),
			Priority: jsii.Number(float64(len(rules))),
			Action:   &awswafv2.CfnWebACL_RuleActionProperty{Block: &awswafv2.CfnWebACL_BlockActionProperty{}},
			Statement: &awswafv2.CfnWebACL_StatementProperty{AndStatement: &awswafv2.CfnWebACL_AndStatementProperty{Statements: &[]any{
				sourcePathStatement(s.Name),
				&awswafv2.CfnWebACL_StatementProperty{NotStatement: &awswafv2.CfnWebACL_NotStatementProperty{Statement: anyOf(match)}},
			}}},
			VisibilityConfig: visibility("AllowList-" + s.Name),
		})
	}

	rate := &awswafv2.CfnWebACL_RateBasedStatementProperty{
		AggregateKeyType:    jsii.String("IP"),
		Limit:               jsii.Number(float64(cfg.API.WAF.Rate())),
		EvaluationWindowSec: jsii.Number(config.WAFRateWindowSeconds),
	}
	if len(allowed) > 0 {
		rate.ScopeDownStatement = &awswafv2.CfnWebACL_StatementProperty{NotStatement: &awswafv2.CfnWebACL_NotStatementProperty{Statement: anyOf(allowed)}}
	}
	rules = append(rules, &awswafv2.CfnWebACL_RuleProperty{
		Name:             jsii.String("RatePerIP"),
		Priority:         jsii.Number(float64(len(rules))),
		Action:           &awswafv2.CfnWebACL_RuleActionProperty{Block: &awswafv2.CfnWebACL_BlockActionProperty{}},
		Statement:        &awswafv2.CfnWebACL_StatementProperty{RateBasedStatement: rate},
		VisibilityConfig: visibility("RatePerIP"),
	})

	var overrides []any
	for _, name := range CountedCommonRules {
		overrides = append(overrides, &awswafv2.CfnWebACL_RuleActionOverrideProperty{
			Name:        jsii.String(name),
			ActionToUse: &awswafv2.CfnWebACL_RuleActionProperty{Count: &awswafv2.CfnWebACL_CountActionProperty{}},
		})
	}
	rules = append(rules, &awswafv2.CfnWebACL_RuleProperty{
		Name:           jsii.String(CommonRuleSet),
		Priority:       jsii.Number(float64(len(rules))),
		OverrideAction: &awswafv2.CfnWebACL_OverrideActionProperty{None: map[string]any{}},
		Statement: &awswafv2.CfnWebACL_StatementProperty{ManagedRuleGroupStatement: &awswafv2.CfnWebACL_ManagedRuleGroupStatementProperty{
			VendorName:          jsii.String("AWS"),
			Name:                jsii.String(CommonRuleSet),
			RuleActionOverrides: &overrides,
		}},
		VisibilityConfig: visibility(CommonRuleSet),
	})

	w.ACL = awswafv2.NewCfnWebACL(w.Construct, jsii.String("Acl"), &awswafv2.CfnWebACLProps{
		Description:      jsii.String("Hookfan webhook ingest: per-source allow-lists, a per-IP rate limit, AWS common rules"),
		Scope:            jsii.String("REGIONAL"),
		DefaultAction:    &awswafv2.CfnWebACL_DefaultActionProperty{Allow: &awswafv2.CfnWebACL_AllowActionProperty{}},
		Rules:            &rules,
		VisibilityConfig: visibility("WebAcl"),
	})
	w.Association = awswafv2.NewCfnWebACLAssociation(w.Construct, jsii.String("Association"), &awswafv2.CfnWebACLAssociationProps{
		ResourceArn: props.StageArn,
		WebAclArn:   w.ACL.AttrArn(),
	})
	return w
}

// sourcePathStatement matches a request to a source's route: the path,
// URL-decoded and normalized (repeated slashes, "./" and "../" resolved),
// ends in /webhooks/<name> or /webhooks/<name>/. It holds with or without
// the stage prefix, so it fits the execute-api URL and a custom domain.
func sourcePathStatement(name string) *awswafv2.CfnWebACL_StatementProperty {
	return &awswafv2.CfnWebACL_StatementProperty{RegexMatchStatement: &awswafv2.CfnWebACL_RegexMatchStatementProperty{
		FieldToMatch: &awswafv2.CfnWebACL_FieldToMatchProperty{UriPath: map[string]any{}},
		RegexString:  jsii.String("/webhooks/" + name + "/?$"),
		TextTransformations: &[]any{
			&awswafv2.CfnWebACL_TextTransformationProperty{Priority: jsii.Number(0), Type: jsii.String("URL_DECODE")},
			&awswafv2.CfnWebACL_TextTransformationProperty{Priority: jsii.Number(1), Type: jsii.String("NORMALIZE_PATH")},
		},
	}}
}

// anyOf is one statement, or an OR of several (WAF's OR needs two or more).
func anyOf(statements []any) any {
	if len(statements) == 1 {
		return statements[0]
	}
	return &awswafv2.CfnWebACL_StatementProperty{OrStatement: &awswafv2.CfnWebACL_OrStatementProperty{Statements: &statements}}
}
