// Package lambdaenv builds the AWS SDK configuration of a Hookfan function
// from the environment Lambda gives it.
//
// Inside Lambda the SDK's default loader (awsconfig.Load) resolves exactly
// this — the region, and the execution role's credentials Lambda puts in
// the environment — but it links the clients of every other credential
// source (SSO, SSO OIDC, STS, sign-in) and the instance metadata client,
// whose package initialisation costs every cold start about a millisecond
// for code a function never runs. This package imports none of them.
package lambdaenv

import (
	"errors"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Environment variables read. Lambda sets the first four for every
// function; AWS_ENDPOINT_URL points the clients at an emulator (LocalStack
// sets it for the functions it runs).
const (
	EnvRegion       = "AWS_REGION"
	EnvAccessKeyID  = "AWS_ACCESS_KEY_ID"
	EnvSecretKey    = "AWS_SECRET_ACCESS_KEY"
	EnvSessionToken = "AWS_SESSION_TOKEN"
	EnvEndpointURL  = "AWS_ENDPOINT_URL"
)

// Config returns the SDK configuration for the function's clients: the
// region, the static credentials of the execution role (they last as long
// as the execution environment), and the endpoint override when set.
// Nothing is fetched. A missing variable is an error naming it.
func Config() (aws.Config, error) {
	var missing []error
	get := func(name string) string {
		v := os.Getenv(name)
		if v == "" {
			missing = append(missing, fmt.Errorf("environment variable %s is not set (Lambda sets it for every function)", name))
		}
		return v
	}
	region, key, secret := get(EnvRegion), get(EnvAccessKeyID), get(EnvSecretKey)
	if err := errors.Join(missing...); err != nil {
		return aws.Config{}, err
	}
	cfg := aws.Config{
		Region:      region,
		Credentials: aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(key, secret, os.Getenv(EnvSessionToken))),
	}
	if endpoint := os.Getenv(EnvEndpointURL); endpoint != "" {
		cfg.BaseEndpoint = aws.String(endpoint)
	}
	return cfg, nil
}
