package config

import "github.com/hookfan/hookfan/shared/transform"

// validateTransform compiles the destination's transform, a jq expression:
// one that does not compile is refused at synth, with gojq's error.
func (d *Destination) validateTransform(p *problems, at string) {
	if d.Transform == "" {
		return
	}
	if _, err := transform.Compile(d.Transform); err != nil {
		p.add(at+".transform", "%q %v; fix the jq expression (docs/configuration.md#destination-transform has examples; test it with jq -c '<expression>' < event.json)", d.Transform, err)
	}
}

// EnvDeadLetterURL is the deliver function's variable naming its lane's
// DLQ, set when the destination has a transform: a message the transform
// fails on goes there at once.
const EnvDeadLetterURL = "HOOKFAN_DLQ_URL"
