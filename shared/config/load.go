package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// ContextKey is the cdk.json context key holding the configuration.
const ContextKey = "hookfan"

// ContextFileKey is the CDK context key naming a JSON config file
// (cdk deploy -c hookfanConfig=path).
const ContextFileKey = "hookfanConfig"

// Parse decodes one JSON configuration strictly (unknown, repeated and
// case-variant keys are errors, decode.go), fills in defaults and
// validates it. Every problem is reported at once, joined.
func Parse(data []byte) (*Config, error) {
	var c Config
	if err := decodeStrict(data, &c, ""); err != nil {
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

// LineColumn is the 1-based line and column (in bytes) of offset in data:
// where an editor shows the byte a decoder counts an error at.
func LineColumn(data []byte, offset int64) (line, column int) {
	offset = max(0, min(offset, int64(len(data))))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	column = int(offset) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, column
}

// DescribeSyntaxError gives a JSON syntax error of data, from
// encoding/json or go-json-experiment/json, its line and column instead of
// its byte offset; other errors come back as they are.
func DescribeSyntaxError(data []byte, err error) error {
	var syntaxErr *json.SyntaxError
	var syntacticErr *jsontext.SyntacticError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		line, col := LineColumn(data, int64(len(data)))
		return fmt.Errorf("invalid JSON: the document ends at line %d, column %d before it is complete; close every { and [ and string", line, col)
	case errors.As(err, &syntaxErr):
		// The offset counts the byte that broke the syntax.
		line, col := LineColumn(data, syntaxErr.Offset-1)
		return fmt.Errorf("invalid JSON at line %d, column %d: %s", line, col, syntaxErr.Error())
	case errors.As(err, &syntacticErr) && syntacticErr.Err != nil:
		// The offset is the byte that broke the syntax.
		line, col := LineColumn(data, syntacticErr.ByteOffset)
		where := ""
		if syntacticErr.JSONPointer != "" {
			where = ", in " + fieldPath(nil, syntacticErr.JSONPointer, "")
		}
		fix := ""
		if !utf8.Valid(data) {
			fix = "; write the document in UTF-8"
		}
		return fmt.Errorf("invalid JSON at line %d, column %d%s: %s%s", line, col, where, syntacticErr.Err.Error(), fix)
	}
	return err
}
