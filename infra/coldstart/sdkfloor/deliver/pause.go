//go:build !hookfan.nopause

package main

import _ "github.com/aws/aws-sdk-go-v2/service/lambda"
