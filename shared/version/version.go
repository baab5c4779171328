// Package version holds Hookfan's release version, sent as
// "user-agent: hookfan/<version>" on every delivery.
package version

// Version is the release version.
const Version = "0.1.0"

// UserAgent is the User-Agent header value of deliveries.
const UserAgent = "hookfan/" + Version
