package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscertificatemanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsroute53"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsroute53targets"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/config"
)

// CustomDomainProps configures the custom domain. Exactly one of Rest and
// HTTP is set.
type CustomDomainProps struct {
	// API supplies the domain name, the certificate ARN and the hosted zone.
	API  config.API
	Rest awsapigateway.RestApi
	HTTP *HTTPIngest
}

// CustomDomain is a regional custom domain mapped at its root to the
// ingest stage, so the webhook URLs are https://<domain>/webhooks/<source>
// and survive a recreated API. With a hosted zone it also holds the alias
// record (and, without a certificate ARN, a DNS-validated certificate).
type CustomDomain struct {
	constructs.Construct
	// Name is the domain name.
	Name        string
	Certificate awscertificatemanager.ICertificate
	// Target is the regional domain name a DNS record for Name must point
	// to (an alias, or a CNAME when the zone is not in Route 53).
	Target *string
	// TargetZoneID is Target's hosted zone, for an alias record.
	TargetZoneID *string
	// Record is the alias record; nil without a hosted zone.
	Record awsroute53.ARecord
}

// NewCustomDomain builds the domain, its mapping and, with a hosted zone,
// its certificate and record.
func NewCustomDomain(scope constructs.Construct, id string, props *CustomDomainProps) *CustomDomain {
	a := props.API
	d := &CustomDomain{Construct: constructs.NewConstruct(scope, jsii.String(id)), Name: a.DomainName}
	var zone awsroute53.IHostedZone
	if a.HasHostedZone() {
		zone = awsroute53.HostedZone_FromHostedZoneAttributes(d.Construct, jsii.String("Zone"), &awsroute53.HostedZoneAttributes{
			HostedZoneId: jsii.String(a.HostedZoneID), ZoneName: jsii.String(a.HostedZoneName),
		})
	}
	if a.CertificateArn != "" {
		d.Certificate = awscertificatemanager.Certificate_FromCertificateArn(d.Construct, jsii.String("Certificate"), jsii.String(a.CertificateArn))
	} else {
		cert := awscertificatemanager.NewCertificate(d.Construct, jsii.String("Certificate"), &awscertificatemanager.CertificateProps{
			DomainName: jsii.String(a.DomainName),
			Validation: awscertificatemanager.CertificateValidation_FromDns(zone),
		})
		// Providers hold this name for years; a certificate that went with
		// the stack would leave the domain without one on a redeploy.
		cert.ApplyRemovalPolicy(awscdk.RemovalPolicy_RETAIN)
		d.Certificate = cert
	}

	var alias awsroute53.IAliasRecordTarget
	if props.HTTP != nil {
		dn := awsapigatewayv2.NewDomainName(d.Construct, jsii.String("DomainName"), &awsapigatewayv2.DomainNameProps{
			DomainName:     jsii.String(a.DomainName),
			Certificate:    d.Certificate,
			EndpointType:   awsapigatewayv2.EndpointType_REGIONAL,
			SecurityPolicy: awsapigatewayv2.SecurityPolicy_TLS_1_2,
		})
		awsapigatewayv2.NewApiMapping(d.Construct, jsii.String("Mapping"), &awsapigatewayv2.ApiMappingProps{
			Api: props.HTTP.API, DomainName: dn, Stage: props.HTTP.Stage,
		})
		d.Target, d.TargetZoneID = dn.RegionalDomainName(), dn.RegionalHostedZoneId()
		alias = awsroute53targets.NewApiGatewayv2DomainProperties(d.Target, d.TargetZoneID)
	} else {
		dn := awsapigateway.NewDomainName(d.Construct, jsii.String("DomainName"), &awsapigateway.DomainNameProps{
			DomainName:     jsii.String(a.DomainName),
			Certificate:    d.Certificate,
			EndpointType:   awsapigateway.EndpointType_REGIONAL,
			SecurityPolicy: awsapigateway.SecurityPolicy_TLS_1_2,
		})
		dn.AddBasePathMapping(props.Rest, &awsapigateway.BasePathMappingOptions{Stage: props.Rest.DeploymentStage()})
		d.Target, d.TargetZoneID = dn.DomainNameAliasDomainName(), dn.DomainNameAliasHostedZoneId()
		alias = awsroute53targets.NewApiGatewayDomain(dn)
	}
	if zone != nil {
		d.Record = awsroute53.NewARecord(d.Construct, jsii.String("Alias"), &awsroute53.ARecordProps{
			Zone:       zone,
			RecordName: jsii.String(a.DomainName),
			Target:     awsroute53.RecordTarget_FromAlias(alias),
		})
	}
	return d
}
