package https

import "strings"

// HeaderTraceParent is the W3C Trace Context header a delivery carries when
// tracing is on (config tracing "sampled" or "all").
const HeaderTraceParent = "traceparent"

// TraceParent derives a W3C traceparent from an X-Ray trace header
// ("Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"):
// version 00, the root's 32 hex digits without the "1-" and the dash, the
// parent's 16, and the sampled flag (01 when Sampled=1, else 00). ok is false
// when the header has no well-formed Root and Parent.
func TraceParent(xray string) (traceparent string, ok bool) {
	var root, parent, sampled string
	for part := range strings.SplitSeq(xray, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Root":
			root = v
		case "Parent":
			parent = v
		case "Sampled":
			sampled = v
		}
	}
	version, rest, _ := strings.Cut(root, "-")
	epoch, random, _ := strings.Cut(rest, "-")
	id := epoch + random
	if version != "1" || len(epoch) != 8 || len(id) != 32 || !lowerHex(id) || len(parent) != 16 || !lowerHex(parent) ||
		id == strings.Repeat("0", 32) || parent == strings.Repeat("0", 16) {
		return "", false
	}
	flags := "00"
	if sampled == "1" {
		flags = "01"
	}
	return "00-" + id + "-" + parent + "-" + flags, true
}

func lowerHex(s string) bool {
	for i := range len(s) {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
