//go:build !hookfan.nopayloads

package main

import _ "github.com/aws/aws-sdk-go-v2/service/s3"
