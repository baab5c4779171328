package archive

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// EncodeObject renders records as one archive object: each record as
// compact JSON on its own line, the whole gzip-compressed. A record that is
// not JSON is an error: the archive holds only what a reader can parse.
func EncodeObject(records [][]byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	var line bytes.Buffer
	for i, r := range records {
		line.Reset()
		if err := json.Compact(&line, r); err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
		line.WriteByte('\n')
		if _, err := zw.Write(line.Bytes()); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// BadRecord is a record of an object that could not be read.
type BadRecord struct {
	Key  string
	Line int // 1-based line of the (decompressed) object
	Err  error
}

func (b BadRecord) Error() string { return fmt.Sprintf("%s line %d: %v", b.Key, b.Line, b.Err) }

// ErrRecordTooLong means a line is longer than MaxRecordBytes.
var ErrRecordTooLong = errors.New("record longer than the archive's limit")

// readObject calls visit for each record of an object: its lines, gzip
// or not (sniffed), each line holding one JSON record or, should a writer
// have left out the delimiter, several in a row. A line that does not parse
// is reported to bad and skipped; the rest of the object is still read.
func readObject(key string, r io.Reader, visit func(Event) error, bad func(BadRecord)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 64<<10)
	}
	for n := 1; ; n++ {
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			if verr := visitLine(line, visit); verr != nil {
				var be badLine
				if !errors.As(verr, &be) {
					return verr // the visitor stopped the scan
				}
				bad(BadRecord{Key: key, Line: n, Err: be.err})
			}
		}
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, ErrRecordTooLong):
			bad(BadRecord{Key: key, Line: n, Err: err})
		case err != nil:
			return fmt.Errorf("%s: %w", key, err)
		}
	}
}

// readLine reads up to the next newline, at most MaxRecordBytes; a longer
// line is skipped to its end and reported as ErrRecordTooLong.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) <= MaxRecordBytes {
			line = append(line, chunk...)
		} else {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err == nil {
				err = ErrRecordTooLong
			}
			if errors.Is(err, io.EOF) {
				return nil, ErrRecordTooLong
			}
			return nil, err
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// badLine marks a parse failure, as opposed to the visitor's own error.
type badLine struct{ err error }

func (b badLine) Error() string { return b.err.Error() }

func visitLine(line []byte, visit func(Event) error) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	for {
		var env Envelope
		err := dec.Decode(&env)
		if errors.Is(err, io.EOF) {
			return nil
		}
		var typeErr *json.UnmarshalTypeError
		if err != nil && !errors.As(err, &typeErr) {
			return badLine{fmt.Errorf("%w: not JSON: %w", ErrMalformed, err)}
		}
		if err != nil {
			return badLine{fmt.Errorf("%w: not an SNS notification envelope: %w", ErrMalformed, err)}
		}
		ev, err := env.Event()
		if err != nil {
			return badLine{err}
		}
		if err := visit(ev); err != nil {
			return err
		}
	}
}
