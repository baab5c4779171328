package stack

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/config"
)

// Subnet sizes of the egress VPC: the public subnets hold only a NAT
// gateway each; the private ones the deliver functions' network interfaces
// (Lambda shares one per subnet and security group, so few addresses).
const (
	natSubnetMask      = 28
	functionSubnetMask = 24
)

// EgressProps configures the egress network.
type EgressProps struct {
	// Egress is the configuration's egress (StaticAddresses set; required).
	Egress config.Egress
	// LogRetention of the flow logs.
	LogRetention awslogs.RetentionDays
}

// EgressNetwork is the stack's own VPC for the lanes that deliver from
// static addresses: private subnets for the functions, public subnets for
// one NAT gateway per zone, each with an Elastic IP that outlives the
// stack (or one the configuration brings), flow logs, and gateway
// endpoints for DynamoDB and S3 (free, so the record and payload calls do
// not pay NAT processing).
type EgressNetwork struct {
	constructs.Construct
	Vpc awsec2.Vpc
	// Addresses are the Elastic IPs the stack allocated, one per zone;
	// nil when the configuration brings its own (AllocationIDs).
	Addresses []awsec2.CfnEIP
	// AllocationIDs are the addresses' allocation ids (tokens for the
	// stack's own).
	AllocationIDs []*string
	// PublicIPs are the addresses (tokens); nil with the configuration's
	// own allocation ids, whose addresses CloudFormation cannot read.
	PublicIPs []*string
	FlowLogs  awslogs.LogGroup
	// Endpoints are the DynamoDB and S3 gateway endpoints.
	Endpoints []awsec2.GatewayVpcEndpoint
}

// NewEgressNetwork builds the egress VPC.
func NewEgressNetwork(scope constructs.Construct, id string, props *EgressProps) (*EgressNetwork, error) {
	if props == nil || !props.Egress.StaticAddresses {
		return nil, fmt.Errorf("egress network: egress.staticAddresses is not set")
	}
	e := &EgressNetwork{Construct: constructs.NewConstruct(scope, jsii.String(id))}
	zones := props.Egress.ZoneCount()

	if ids := props.Egress.AllocationIDs; len(ids) > 0 {
		e.AllocationIDs = *jsii.Strings(ids...)
	} else {
		for i := range zones {
			eip := awsec2.NewCfnEIP(e.Construct, jsii.String(fmt.Sprintf("Address%d", i+1)), &awsec2.CfnEIPProps{
				Domain: jsii.String("vpc"),
				Tags:   &[]*awscdk.CfnTag{{Key: jsii.String("Name"), Value: jsii.String(fmt.Sprintf("hookfan egress %d", i+1))}},
			})
			// Receivers allow-list these addresses: they must survive a
			// deploy that replaces the VPC and the stack's deletion. A
			// retained address left unassociated is billed; docs/operations.md
			// says how to release it.
			eip.ApplyRemovalPolicy(awscdk.RemovalPolicy_RETAIN, nil)
			e.Addresses = append(e.Addresses, eip)
			e.AllocationIDs = append(e.AllocationIDs, eip.AttrAllocationId())
			e.PublicIPs = append(e.PublicIPs, eip.AttrPublicIp())
		}
	}

	// An environment-agnostic stack sees only two zones unless it names
	// them: the first N of the region's, resolved at deploy time.
	azs := make([]*string, zones)
	for i := range azs {
		azs[i] = awscdk.Fn_Select(jsii.Number(float64(i)), awscdk.Fn_GetAzs(jsii.String("")))
	}
	e.FlowLogs = awslogs.NewLogGroup(e.Construct, jsii.String("FlowLogs"), &awslogs.LogGroupProps{
		Retention:     props.LogRetention,
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
	e.Vpc = awsec2.NewVpc(e.Construct, jsii.String("Vpc"), &awsec2.VpcProps{
		IpAddresses:        awsec2.IpAddresses_Cidr(jsii.String(props.Egress.VPCRange())),
		AvailabilityZones:  &azs,
		NatGateways:        jsii.Number(float64(zones)),
		NatGatewayProvider: awsec2.NatProvider_Gateway(&awsec2.NatGatewayProps{EipAllocationIds: &e.AllocationIDs}),
		SubnetConfiguration: &[]*awsec2.SubnetConfiguration{
			{Name: jsii.String("Nat"), SubnetType: awsec2.SubnetType_PUBLIC, CidrMask: jsii.Number(natSubnetMask), MapPublicIpOnLaunch: jsii.Bool(false)},
			{Name: jsii.String("Functions"), SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS, CidrMask: jsii.Number(functionSubnetMask)},
		},
		// Nothing is placed in the default security group; restricting
		// it would take a custom resource (a Node.js function with a
		// managed policy) for no gain.
		RestrictDefaultSecurityGroup: jsii.Bool(false),
		FlowLogs: &map[string]*awsec2.FlowLogOptions{
			"FlowLog": {
				Destination: awsec2.FlowLogDestination_ToCloudWatchLogs(e.FlowLogs, nil),
				TrafficType: awsec2.FlowLogTrafficType_ALL,
			},
		},
	})
	private := &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS}
	for _, gw := range []struct {
		id      string
		service awsec2.GatewayVpcEndpointAwsService
	}{{"DynamoDb", awsec2.GatewayVpcEndpointAwsService_DYNAMODB()}, {"S3", awsec2.GatewayVpcEndpointAwsService_S3()}} {
		e.Endpoints = append(e.Endpoints, e.Vpc.AddGatewayEndpoint(jsii.String(gw.id), &awsec2.GatewayVpcEndpointOptions{
			Service: gw.service, Subnets: &[]*awsec2.SubnetSelection{private},
		}))
	}
	return e, nil
}

// Shown is what the stack's output, its index and ops lanes show of the
// egress: the public IPs, or the allocation ids the configuration brought.
func (e *EgressNetwork) Shown() []*string {
	if e.PublicIPs != nil {
		return e.PublicIPs
	}
	return e.AllocationIDs
}

// placeInVPC puts the lane's function in the egress VPC's private
// subnets, behind a security group of its own that lets out only the
// ports its deliveries and the AWS APIs need, and gives its role what
// Lambda needs to manage the function's network interfaces, inline and
// scoped: AWSLambdaVPCAccessExecutionRole would grant them, and the
// logs, on every resource.
func (l *Lane) placeInVPC(e *EgressNetwork) {
	vpc := e.Vpc
	l.SecurityGroup = awsec2.NewSecurityGroup(l.Construct, jsii.String("EgressSecurityGroup"), &awsec2.SecurityGroupProps{
		Vpc:              vpc,
		Description:      jsii.String("Hookfan deliver function of destination " + l.Destination.Name + ": outbound only"),
		AllowAllOutbound: jsii.Bool(false),
	})
	// The ports the configuration names (config.Destination.EgressPorts):
	// 443, the url's and the token endpoint's. A URL read from its secret
	// on another port is refused at run time, recorded, not left to time
	// out against the group.
	for _, p := range l.Destination.EgressPorts() {
		l.SecurityGroup.AddEgressRule(awsec2.Peer_AnyIpv4(), awsec2.Port_Tcp(jsii.Number(float64(p))), jsii.String(fmt.Sprintf("https out on %d", p)), nil)
	}
	subnets := vpc.SelectSubnets(&awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS})
	cfn := l.Function.Node().DefaultChild().(awslambda.CfnFunction)
	cfn.SetVpcConfig(&awslambda.CfnFunction_VpcConfigProperty{
		SubnetIds:        subnets.SubnetIds,
		SecurityGroupIds: &[]*string{l.SecurityGroup.SecurityGroupId()},
	})

	stack := awscdk.Stack_Of(l.Construct)
	arn := func(resource string) *string {
		return stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("ec2"), Resource: jsii.String(resource), ArnFormat: awscdk.ArnFormat_SLASH_RESOURCE_NAME, ResourceName: jsii.String("*")})
	}
	interfaces := arn("network-interface")
	create := []*string{interfaces, stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("ec2"), Resource: jsii.String("security-group"),
		ArnFormat: awscdk.ArnFormat_SLASH_RESOURCE_NAME, ResourceName: l.SecurityGroup.SecurityGroupId()})}
	for _, s := range *subnets.SubnetIds {
		create = append(create, stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("ec2"), Resource: jsii.String("subnet"),
			ArnFormat: awscdk.ArnFormat_SLASH_RESOURCE_NAME, ResourceName: s}))
	}
	// In the role's default policy, which the function depends on: Lambda
	// checks these when it creates the function.
	l.Role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid: jsii.String("DescribeNetworkInterfaces"), Actions: jsii.Strings(vpcDescribeActions...), Resources: jsii.Strings("*"),
	}))
	l.Role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid: jsii.String("CreateNetworkInterfaces"), Actions: jsii.Strings("ec2:CreateNetworkInterface"), Resources: &create,
	}))
	l.Role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid: jsii.String("ManageNetworkInterfaces"), Actions: jsii.Strings(vpcInterfaceActions...), Resources: &[]*string{interfaces},
	}))
	suppress(l.Role, suppression{id: "AwsSolutions-IAM5", reason: reasonENI,
		appliesTo: []string{"Resource::*", "Resource::arn:<AWS::Partition>:ec2:<AWS::Region>:<AWS::AccountId>:network-interface/*"}})
}

// The EC2 actions a function in a VPC needs (those of
// AWSLambdaVPCAccessExecutionRole, v3): the two Describe calls have no
// resource-level permissions; the rest act on network interfaces whose ids
// Lambda picks.
var (
	vpcDescribeActions  = []string{"ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets"}
	vpcInterfaceActions = []string{"ec2:DeleteNetworkInterface", "ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses"}
)

const reasonENI = "A deliver function with static egress runs in the stack's VPC: Lambda manages its network interfaces with the function's role. ec2:DescribeNetworkInterfaces and ec2:DescribeSubnets have no resource-level permissions, so AWS requires Resource \"*\"; creating, deleting and re-addressing act on interfaces whose ids Lambda picks (network-interface/*), and creation is limited to the lane's subnets and security group."

// addOutputs writes the addresses as a stack output.
func (e *EgressNetwork) addOutputs(stack awscdk.Stack) {
	desc := "The static egress addresses of the lanes with egress \"static\" (give them to the receivers to allow-list)"
	if e.PublicIPs == nil {
		desc = "The Elastic IP allocation ids the lanes with egress \"static\" deliver from (aws ec2 describe-addresses --allocation-ids … shows their addresses)"
	}
	shown := e.Shown()
	awscdk.NewCfnOutput(stack, jsii.String("EgressAddresses"), &awscdk.CfnOutputProps{
		Value: awscdk.Fn_Join(jsii.String(","), &shown), Description: jsii.String(desc),
	})
}

// egressPath is the lane's egress as its index shows it.
func egressPath(d config.Destination) string {
	if d.StaticEgress() {
		return config.EgressStatic
	}
	return config.EgressPublic
}
