/*
Copyright 2026 The RunLore Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package audit is the tamper-evident record of every action attempt: an
// append-only file of JSON lines, each carrying the hash of the line before
// it, so that editing, deleting, inserting or reordering a line breaks the
// chain at a point Verify names. It must never rewrite or truncate the file,
// and never acknowledge an append before the line is fsync'd. Removing lines
// from the end leaves a shorter valid chain: compare the head Verify reports
// with the head the operator mirrored elsewhere (Events) to detect that.
package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Genesis is the prev of the first line.
const Genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// MaxLineBytes bounds one line, for writers and for the verifier.
const MaxLineBytes = 1 << 20

// hashField closes every line: `,"hash":"<64 hex>"}`. The hash covers the
// bytes before it, so the verifier needs no canonical re-encoding.
const hashPrefix = `,"hash":"`

// Line is one audit record as written.
type Line struct {
	Seq   uint64          `json:"seq"`
	Time  time.Time       `json:"time"`
	Prev  string          `json:"prev"`
	Entry json.RawMessage `json:"entry"`
	Hash  string          `json:"hash"`
}

// Head is the end of a chain: how many lines, and the last line's hash.
type Head struct {
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash"`
}

// Log appends to one audit file. Its methods are safe for concurrent use.
type Log struct {
	mu   sync.Mutex
	f    *os.File
	head Head
	now  func() time.Time
}

// Open opens (creating if needed) the audit file at path, verifying the
// chain already in it; a broken chain is an error, because appending to it
// would hide where it broke.
func Open(path string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening audit log: %w", err)
	}
	head, err := Verify(f)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("audit log %s: %w", path, err)
	}
	return &Log{f: f, head: head, now: time.Now}, nil
}

// Head is the chain's current end.
func (l *Log) Head() Head {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.head
}

// Append writes entry (any JSON-encodable value) as the next line and
// fsyncs it before returning the line.
func (l *Log) Append(entry any) (Line, error) {
	raw, err := json.Marshal(entry)
	if err != nil {
		return Line{}, fmt.Errorf("encoding audit entry: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return Line{}, errors.New("audit log is closed")
	}
	line := Line{Seq: l.head.Seq + 1, Time: l.now().UTC(), Prev: l.head.Hash, Entry: raw}
	if line.Prev == "" {
		line.Prev = Genesis
	}
	b, err := encode(&line)
	if err != nil {
		return Line{}, err
	}
	if len(b) > MaxLineBytes {
		return Line{}, fmt.Errorf("audit entry is %d bytes, over the %d-byte line limit", len(b), MaxLineBytes)
	}
	if _, err := l.f.Write(b); err != nil {
		return Line{}, fmt.Errorf("writing audit line %d: %w", line.Seq, err)
	}
	if err := l.f.Sync(); err != nil {
		return Line{}, fmt.Errorf("syncing audit line %d: %w", line.Seq, err)
	}
	l.head = Head{Seq: line.Seq, Hash: line.Hash}
	return line, nil
}

// Close closes the file.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// encode renders the line with its hash filled in, newline-terminated.
func encode(line *Line) ([]byte, error) {
	body, err := json.Marshal(struct {
		Seq   uint64          `json:"seq"`
		Time  time.Time       `json:"time"`
		Prev  string          `json:"prev"`
		Entry json.RawMessage `json:"entry"`
	}{line.Seq, line.Time, line.Prev, line.Entry})
	if err != nil {
		return nil, fmt.Errorf("encoding audit line: %w", err)
	}
	body = body[:len(body)-1] // drop the closing brace; the hash closes it
	line.Hash = hashOf(body)
	out := make([]byte, 0, len(body)+len(hashPrefix)+len(line.Hash)+3)
	out = append(out, body...)
	out = append(out, hashPrefix...)
	out = append(out, line.Hash...)
	out = append(out, "\"}\n"...)
	return out, nil
}

func hashOf(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// BrokenLinkError names the first line where the chain does not hold.
type BrokenLinkError struct {
	// Line is the 1-based line number in the file.
	Line int
	// Reason says what is wrong with it.
	Reason string
}

func (e *BrokenLinkError) Error() string {
	return fmt.Sprintf("chain broken at line %d: %s", e.Line, e.Reason)
}

// Verify re-walks the chain from the start and returns its head, or a
// *BrokenLinkError naming the first line that is malformed, whose hash does
// not match its content, whose prev is not the previous line's hash, or
// whose seq is out of order.
func Verify(r io.Reader) (Head, error) {
	head := Head{}
	prev := Genesis
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		raw, err := readLine(br)
		if err == io.EOF {
			return head, nil
		}
		if err != nil {
			if errors.Is(err, errLineTooLong) || errors.Is(err, errTorn) {
				return head, &BrokenLinkError{Line: n, Reason: err.Error()}
			}
			return head, fmt.Errorf("reading audit line %d: %w", n, err)
		}
		line, reason := checkLine(raw, prev, head.Seq+1)
		if reason != "" {
			return head, &BrokenLinkError{Line: n, Reason: reason}
		}
		prev = line.Hash
		head = Head{Seq: line.Seq, Hash: line.Hash}
	}
}

var (
	errLineTooLong = fmt.Errorf("line is longer than %d bytes", MaxLineBytes)
	errTorn        = errors.New("last line has no newline (a torn write)")
)

func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > MaxLineBytes+1 {
			return nil, errLineTooLong
		}
		switch {
		case err == nil:
			return buf[:len(buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(buf) == 0:
			return nil, io.EOF
		case err == io.EOF:
			return nil, errTorn
		default:
			return nil, err
		}
	}
}

// checkLine returns the parsed line, or why it breaks the chain.
func checkLine(raw []byte, prev string, seq uint64) (Line, string) {
	var line Line
	if err := json.Unmarshal(raw, &line); err != nil {
		return line, "not a JSON audit line: " + err.Error()
	}
	i := bytes.LastIndex(raw, []byte(hashPrefix))
	if i < 0 || !bytes.Equal(raw[i+len(hashPrefix):], []byte(line.Hash+`"}`)) || len(line.Hash) != sha256.Size*2 {
		return line, "the line does not end with its hash"
	}
	if got := hashOf(raw[:i]); got != line.Hash {
		return line, fmt.Sprintf("content does not match its hash (edited): want %s, have %s", line.Hash, got)
	}
	if line.Prev != prev {
		return line, fmt.Sprintf("prev is %s, but the line before hashes to %s (a line was deleted, inserted or moved)", line.Prev, prev)
	}
	if line.Seq != seq {
		return line, fmt.Sprintf("seq is %d, want %d", line.Seq, seq)
	}
	return line, ""
}
