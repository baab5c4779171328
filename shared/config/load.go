package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
)

// ContextKey is the cdk.json context key holding the configuration.
const ContextKey = "hookfan"

// ContextFileKey is the CDK context key naming a JSON config file
// (cdk deploy -c hookfanConfig=path).
const ContextFileKey = "hookfanConfig"

// Parse decodes one JSON configuration strictly (unknown fields are errors),
// fills in defaults and validates it. Every validation problem is reported at
// once, joined.
func Parse(data []byte) (*Config, error) {
	var c Config
	if err := decodeStrict(data, &c); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// LoadFile reads and parses a JSON configuration file.
func LoadFile(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// LoadCDKJSON reads the "hookfan" key of a cdk.json file's context.
func LoadCDKJSON(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read cdk.json: %w", err)
	}
	var doc struct {
		Context map[string]json.RawMessage `json:"context"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("cdk.json %s: %w", path, DescribeSyntaxError(data, err))
	}
	raw, ok := doc.Context[ContextKey]
	if !ok {
		return nil, fmt.Errorf("cdk.json %s: no %q key in context; add the Hookfan configuration there or pass -c %s=FILE", path, ContextKey, ContextFileKey)
	}
	c, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("cdk.json %s, context.%s: %w", path, ContextKey, err)
	}
	return c, nil
}

// FromValue parses a configuration that has already been decoded into
// generic JSON values, as the CDK hands out context values.
func FromValue(v any) (*Config, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode context.%s: %w", ContextKey, err)
	}
	return Parse(data)
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return describeDecodeError(data, err)
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		rest := bytes.TrimLeft(data[end:], " \t\r\n")
		line, col := LineColumn(data, int64(len(data)-len(rest)))
		return fmt.Errorf("decode config: unexpected data after the JSON object at line %d, column %d; remove it", line, col)
	}
	return checkKeys(data, reflect.TypeOf(v).Elem())
}

// LineColumn is the 1-based line and column (in bytes) of offset in data:
// where an editor shows the byte encoding/json counts errors at.
func LineColumn(data []byte, offset int64) (line, column int) {
	offset = max(0, min(offset, int64(len(data))))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	column = int(offset) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, column
}

// DescribeSyntaxError gives a JSON syntax error of data its line and
// column instead of its byte offset; other errors come back as they are.
func DescribeSyntaxError(data []byte, err error) error {
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &syntaxErr):
		// The offset counts the byte that broke the syntax.
		line, col := LineColumn(data, syntaxErr.Offset-1)
		return fmt.Errorf("invalid JSON at line %d, column %d: %s", line, col, syntaxErr.Error())
	case errors.Is(err, io.ErrUnexpectedEOF):
		line, col := LineColumn(data, int64(len(data)))
		return fmt.Errorf("invalid JSON: the document ends at line %d, column %d before it is complete; close every { and [ and string", line, col)
	}
	return err
}

// describeDecodeError turns encoding/json's errors into the config's style:
// the field path first, then what is wrong and what would be valid.
func describeDecodeError(data []byte, err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			field = "(top level)"
		}
		return fmt.Errorf("%s: got a JSON %s; want %s", field, typeErr.Value, describeGoType(typeErr.Type.String()))
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("decode config: %w", DescribeSyntaxError(data, err))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return fmt.Errorf("unknown field %s; check its spelling against the configuration reference, docs/configuration.md#configuration-reference", name)
	case errors.Is(err, io.EOF):
		return errors.New("decode config: empty document; want a JSON object")
	default:
		return fmt.Errorf("decode config: %w", err)
	}
}

func describeGoType(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a JSON array"
	case t == "config.Duration":
		return `a duration string such as "30s", "2m" or "1h30m"`
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "float"), t == "*float64":
		return "a number"
	default:
		return "a JSON object"
	}
}
