package server

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

const tokenPrefix = "lbt_"

// NewToken makes a random upload token named name, appends its hash to
// the tokens file (created 0600 if missing) and returns the token, which
// is not kept anywhere.
func NewToken(path, name string) (string, error) {
	if strings.ContainsAny(name, " \t\n") || name == "" {
		return "", fmt.Errorf("token name %q: want one word (who or what uploads with it)", name)
	}
	var raw [24]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	tok := tokenPrefix + hex.EncodeToString(raw[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return "", err
	}
	st, _ := f.Stat()
	if st != nil && st.Size() == 0 {
		fmt.Fprintln(f, "# benchctl upload tokens: the SHA-256 of each token, its name and when it was made; the tokens themselves are not kept")
	}
	_, err = fmt.Fprintf(f, "sha256:%s %s %s\n", hashToken(tok), name, time.Now().UTC().Format(time.RFC3339))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return tok, err
}

func hashToken(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

// Tokens checks upload tokens against a tokens file, read again whenever
// it changes (a token made while the server runs works at once).
type Tokens struct {
	path string

	mu     sync.Mutex
	mtime  time.Time
	size   int64
	hashes map[string]string // hash → name
}

// LoadTokens reads a tokens file. A file that is missing or has a
// malformed line is an error.
func LoadTokens(path string) (*Tokens, error) {
	t := &Tokens{path: path}
	if err := t.reload(); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Tokens) reload() error {
	st, err := os.Stat(t.path)
	if err != nil {
		return fmt.Errorf("tokens: %w (the token new command makes %s)", err, t.path)
	}
	if st.ModTime().Equal(t.mtime) && st.Size() == t.size && t.hashes != nil {
		return nil
	}
	data, err := os.ReadFile(t.path)
	if err != nil {
		return fmt.Errorf("tokens: %w", err)
	}
	hashes := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		h, ok := strings.CutPrefix(f[0], "sha256:")
		if !ok || len(h) != 64 || len(f) < 2 {
			return fmt.Errorf("tokens %s:%d: want \"sha256:HASH NAME [TIME]\"", t.path, n)
		}
		hashes[h] = f[1]
	}
	t.hashes, t.mtime, t.size = hashes, st.ModTime(), st.Size()
	return nil
}

// Check returns the name of token's owner, or false for an unknown token.
// A tokens file that became unreadable keeps the tokens last read.
func (t *Tokens) Check(token string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reload()
	h := hashToken(token)
	for known, name := range t.hashes {
		if subtle.ConstantTimeCompare([]byte(known), []byte(h)) == 1 {
			return name, true
		}
	}
	return "", false
}
