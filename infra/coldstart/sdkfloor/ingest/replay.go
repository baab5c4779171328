//go:build !hookfan.noreplay

package main

import _ "github.com/aws/aws-sdk-go-v2/service/dynamodb"
