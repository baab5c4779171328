// Package devstate is what a process needs to find the local stack of make
// dev from outside it: the names of the resources it provisions on the
// emulator, the record of its persistent emulator, the queue tag standing
// in for each lane's event source mapping switch, and the secrets file.
// The operator command and the sender import it instead of the local
// runtime (infra/local/devstack), which provisions and runs what it names.
package devstate

import "github.com/hookfan/hookfan/shared/config"

// Defaults of make dev: its resource prefix, and the directory recording
// its persistent emulator (git-ignored).
const (
	DefaultPrefix   = "hookfan-dev"
	DefaultStateDir = "infra/local/.state"
)

// Names of the resources the local stack provisions, from the prefix.
func TableName(prefix string) string                 { return prefix + "-deliveries" }
func TopicName(prefix string) string                 { return prefix + "-events" }
func QueueName(prefix, destination string) string    { return prefix + "-" + destination }
func DLQName(prefix, destination string) string      { return prefix + "-" + destination + "-dlq" }
func SubscriptionDLQName(prefix, dest string) string { return prefix + "-" + dest + "-sub-dlq" }
func ArchiveBucketName(prefix string) string         { return prefix + "-archive" }
func PayloadBucketName(prefix string) string         { return prefix + "-payloads" }
func ArchiveQueueName(prefix string) string          { return prefix + "-archive" }

// DestinationSecretName is the secret a lane signs with: the configured one,
// or a name under the prefix.
func DestinationSecretName(prefix string, d config.Destination) string {
	if d.SecretName != "" {
		return d.SecretName
	}
	return prefix + "/destinations/" + d.Name
}
