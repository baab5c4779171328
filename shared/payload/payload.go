// Package payload carries bodies larger than one SNS message: ingest stores
// the body in S3 under a key derived from its source and event id and
// publishes a Reference (a small JSON body and the attribute payload=s3);
// each deliver function reads the object back and checks its size and
// SHA-256 before sending the exact bytes.
//
// With the archive on, ingest also writes each such body into the archive
// bucket under the same key, where it is kept for the archive's retention:
// the archived message is the reference, and the body it names outlives
// the payload bucket's lifecycle there. An operator's redrive or replay
// re-stores the body in the payload bucket (Restore) before the message
// goes back to a queue, so the object's lifecycle starts again with it.
//
// S3 is the store in AWS, Memory its twin for tests; the interfaces are
// declared where they are used (shared/ingest, shared/delivery).
package payload

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Prefix starts every object key; the bucket's lifecycle rule and the
// functions' grants are scoped to it, and under it SourcePrefix to each
// source's objects.
const Prefix = "payloads/"

// SourcePrefix starts the keys of one source's objects: a lane whose
// filter names sources may read those prefixes only.
func SourcePrefix(source string) string { return Prefix + source + "/" }

// MaxSize bounds a reference's size: the largest body any API type hands
// to ingest (config.MaxBodyBytesREST). It is repeated here so that this
// package stays free of the configuration.
const MaxSize = 4521984

var (
	// ErrNotFound means the object is not in the bucket: it expired (the
	// lifecycle), or was never written.
	ErrNotFound = errors.New("payload object not found")
	// ErrMismatch means the object read back is not the one referred to:
	// its size or SHA-256 differs.
	ErrMismatch = errors.New("payload object does not match its reference")
	// ErrReference means a message's body is not a valid reference.
	ErrReference = errors.New("invalid payload reference")
)

// IsGone reports whether err means a body is not where it was looked for:
// missing, or not the body referred to.
func IsGone(err error) bool { return errors.Is(err, ErrNotFound) || errors.Is(err, ErrMismatch) }

// Reference is the body of a message whose event body is in S3.
type Reference struct {
	Bucket string `json:"bucket"`
	Key    string `json:"key"`
	// Size is the body's length in bytes.
	Size int `json:"size"`
	// SHA256 is the hex SHA-256 of the body.
	SHA256 string `json:"sha256"`
}

// Key is the object key of an event's body: under its source's prefix
// (SourcePrefix), named by the event id and the body's SHA-256, so a
// provider's retry of the event (same id, same bytes) overwrites the object
// it wrote before instead of adding one, and no other body can ever stand
// in for the one a message refers to.
func Key(source, eventID string, sum [sha256.Size]byte) string {
	return SourcePrefix(source) + eventID + "/" + hex.EncodeToString(sum[:])
}

// NewReference describes body stored in bucket for an event of source.
func NewReference(bucket, source, eventID string, body []byte) Reference {
	sum := sha256.Sum256(body)
	return Reference{Bucket: bucket, Key: Key(source, eventID, sum), Size: len(body), SHA256: hex.EncodeToString(sum[:])}
}

// JSON is the reference as a message body.
func (r Reference) JSON() string {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err) // strings and an int: cannot fail
	}
	return string(b)
}

// ParseReference reads a message body written by JSON. Every problem is
// reported; the error matches ErrReference.
func ParseReference(body string) (Reference, error) {
	var r Reference
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil || dec.More() {
		return Reference{}, fmt.Errorf("%w: the body is not a reference object", ErrReference)
	}
	var problems []string
	if !validBucket(r.Bucket) {
		problems = append(problems, "bucket is not an S3 bucket name")
	}
	if !strings.HasPrefix(r.Key, Prefix) || len(r.Key) > 1024 || strings.ContainsAny(r.Key, "\x00\r\n") {
		problems = append(problems, "key is not under "+Prefix)
	}
	if r.Size < 1 || r.Size > MaxSize {
		problems = append(problems, fmt.Sprintf("size is not 1 to %d", MaxSize))
	}
	if b, err := hex.DecodeString(r.SHA256); err != nil || len(b) != sha256.Size || strings.ToLower(r.SHA256) != r.SHA256 {
		problems = append(problems, "sha256 is not 64 lowercase hex digits")
	}
	if len(problems) > 0 {
		return Reference{}, fmt.Errorf("%w: %s", ErrReference, strings.Join(problems, "; "))
	}
	return r, nil
}

// Verify checks that body is the one r refers to.
func (r Reference) Verify(body []byte) error {
	if len(body) != r.Size {
		return fmt.Errorf("%w: %d bytes, the reference says %d", ErrMismatch, len(body), r.Size)
	}
	sum := sha256.Sum256(body)
	want, _ := hex.DecodeString(r.SHA256)
	if !bytes.Equal(sum[:], want) {
		return fmt.Errorf("%w: SHA-256 differs", ErrMismatch)
	}
	return nil
}

// validBucket accepts S3's general-purpose bucket names: 3 to 63 of
// lowercase letters, digits, '.' and '-', starting and ending with a
// letter or digit.
func validBucket(s string) bool {
	if len(s) < 3 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (c != '.' && c != '-' || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}
