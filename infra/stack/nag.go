package stack

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/cxapi"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// suppression is one cdk-nag finding accepted on purpose, with the reason
// that makes it right for Hookfan.
type suppression struct {
	id        string
	reason    string
	appliesTo []string
	// appliesToRegex entries are cdk-nag regex literals ("/^...$/").
	appliesToRegex []string
}

// suppress attaches suppressions to a construct and its children. Every
// suppression carries its reason; cdk-nag refuses one without.
func suppress(construct any, s ...suppression) {
	list := make([]*cdknag.NagPackSuppression, 0, len(s))
	for _, x := range s {
		p := &cdknag.NagPackSuppression{Id: jsii.String(x.id), Reason: jsii.String(x.reason)}
		var applies []any
		for _, a := range x.appliesTo {
			applies = append(applies, a)
		}
		for _, r := range x.appliesToRegex {
			applies = append(applies, &cdknag.RegexAppliesTo{Regex: jsii.String(r)})
		}
		if len(applies) > 0 {
			p.AppliesTo = &applies
		}
		list = append(list, p)
	}
	cdknag.NagSuppressions_AddResourceSuppressions(construct, &list, jsii.Bool(true))
}

// Reasons shared by several constructs.
const (
	reasonXRay = "X-Ray active tracing: xray:PutTraceSegments and xray:PutTelemetryRecords do not support resource-level permissions, so AWS requires Resource \"*\"."
	reasonSync = "Invoked synchronously (API Gateway proxy or the SQS event source mapping), never asynchronously: failures return to the caller or stay on the queue, whose redrive policy moves them to the lane's DLQ. A Lambda async DLQ or on-failure destination would never receive anything."
)

// ApplyNag applies cdk-nag's AwsSolutions and Serverless packs to everything
// under scope (nested stacks included). Findings are recorded as error
// annotations; AssemblyErrors collects them after synthesis.
func ApplyNag(scope constructs.IConstruct, reports bool) {
	aspects := awscdk.Aspects_Of(scope)
	aspects.Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Reports: jsii.Bool(reports)}), nil)
	aspects.Add(cdknag.NewServerlessChecks(&cdknag.NagPackProps{Reports: jsii.Bool(reports)}), nil)
}

// Synth synthesizes app and lists its error annotations as
// AssemblyErrors does. With the feature flag
// @aws-cdk/core:annotationsInValidationReport (set in cdk.json) the CDK
// fails the synthesis itself on an error annotation (a panic through
// jsii) after writing a validation report; the report's errors are listed
// then, in the same form. err is for a synthesis that failed otherwise.
func Synth(app awscdk.App) (errs []string, err error) {
	defer func() {
		if p := recover(); p != nil {
			report, rerr := validationErrors(filepath.Join(*app.Outdir(), "validation-report.json"))
			if rerr != nil || len(report) == 0 {
				errs, err = nil, errors.Join(fmt.Errorf("synthesis failed: %v", p), rerr)
				return
			}
			errs, err = report, nil
		}
	}()
	return AssemblyErrors(app.Synth(nil))
}

// validationErrors lists the errors of a CDK validation report as
// "/path: message".
func validationErrors(path string) ([]string, error) {
	var report struct {
		PluginReports []struct {
			Violations []struct {
				Description         string `json:"description"`
				Severity            string `json:"severity"`
				ViolatingConstructs []struct {
					ConstructPath string `json:"constructPath"`
				} `json:"violatingConstructs"`
			} `json:"violations"`
		} `json:"pluginReports"`
	}
	if err := readJSON(path, &report); err != nil {
		return nil, err
	}
	var errs []string
	for _, p := range report.PluginReports {
		for _, v := range p.Violations {
			if v.Severity != "error" {
				continue
			}
			for _, c := range v.ViolatingConstructs {
				errs = append(errs, "/"+strings.TrimPrefix(c.ConstructPath, "/")+": "+strings.TrimSpace(v.Description))
			}
		}
	}
	slices.Sort(errs)
	return errs, nil
}

// AssemblyErrors lists every error annotation recorded in a synthesized
// cloud assembly (unsuppressed cdk-nag findings among them, nested stacks
// included), as "path: message". It reads the assembly's manifest and each
// artifact's additional metadata file, where the CDK moves large metadata.
func AssemblyErrors(asm cxapi.CloudAssembly) ([]string, error) {
	dir := *asm.Directory()
	type entries map[string][]struct {
		Type string `json:"type"`
		Data any    `json:"data"`
	}
	var manifest struct {
		Artifacts map[string]struct {
			Metadata               entries `json:"metadata"`
			AdditionalMetadataFile string  `json:"additionalMetadataFile"`
		} `json:"artifacts"`
	}
	if err := readJSON(filepath.Join(dir, "manifest.json"), &manifest); err != nil {
		return nil, err
	}
	var errs []string
	collect := func(m entries) {
		for path, list := range m {
			for _, e := range list {
				if e.Type == "aws:cdk:error" {
					errs = append(errs, fmt.Sprintf("%s: %v", path, e.Data))
				}
			}
		}
	}
	for _, a := range manifest.Artifacts {
		collect(a.Metadata)
		if a.AdditionalMetadataFile != "" {
			var more entries
			if err := readJSON(filepath.Join(dir, a.AdditionalMetadataFile), &more); err != nil {
				return nil, err
			}
			collect(more)
		}
	}
	slices.Sort(errs)
	return errs, nil
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read the cloud assembly: %w", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("read the cloud assembly: %s: %w", filepath.Base(path), err)
	}
	return nil
}
