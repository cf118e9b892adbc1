package server

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ledgerbench/ledgerbench/internal/atomicfile"
)

const tokenPrefix = "lbt_"

// tokensHeader is the first line of a tokens file.
const tokensHeader = "# benchctl upload tokens: the SHA-256 of each token, its name and when it was made; the tokens themselves are not kept"

// NewToken makes a random upload token named name, appends its hash to
// the tokens file (created 0600 if missing, and made 0600 if it was
// readable by others) and returns the token, which is not kept anywhere.
// A name already in the file is refused: revoking it by name would revoke
// both. With machines, the token uploads only files of those machine-ids.
func NewToken(path, name string, machines ...string) (string, error) {
	if strings.ContainsAny(name, " \t\n") || name == "" {
		return "", fmt.Errorf("token name %q: want one word (who or what uploads with it)", name)
	}
	for _, m := range machines {
		if m == "" || strings.ContainsAny(m, " \t\n,") {
			return "", fmt.Errorf("machine-id %q: want one word without commas", m)
		}
	}
	have, err := ReadTokens(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err // appending to a damaged file would hide the damage
	}
	for _, t := range have {
		if t.Name == name {
			return "", fmt.Errorf("token name %q is taken by token %s (made %s): revoke that one first, or choose another name", name, t.ID(), t.Made)
		}
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
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return "", err
	}
	st, _ := f.Stat()
	if st != nil && st.Size() == 0 {
		fmt.Fprintln(f, tokensHeader)
	}
	bound := ""
	if len(machines) > 0 {
		bound = " " + machinesField + strings.Join(machines, ",")
	}
	_, err = fmt.Fprintf(f, "sha256:%s %s %s%s\n", hashToken(tok), name, time.Now().UTC().Format(time.RFC3339), bound)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return tok, err
}

func hashToken(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

// TokenInfo is one line of a tokens file.
type TokenInfo struct {
	Hash string // the token's SHA-256, in hex
	Name string
	Made string // when it was made (RFC 3339), as recorded
	// Machines, when not empty, are the machine-ids the token may
	// upload files of: any other is refused (403).
	Machines []string
}

// machinesField begins a tokens line's fourth field, the machine-ids the
// token is bound to.
const machinesField = "machines="

// Allows reports whether the token may upload a file of machine-id m.
func (t TokenInfo) Allows(m string) bool {
	return len(t.Machines) == 0 || slices.Contains(t.Machines, m)
}

// ID is the token's short name in listings: the first 12 hex digits of
// its hash.
func (t TokenInfo) ID() string { return t.Hash[:12] }

// ReadTokens reads a tokens file. A file that is missing or has a
// malformed line is an error.
func ReadTokens(path string) ([]TokenInfo, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokens: %w (the token new command makes %s)", err, path)
	}
	return parseTokens(path, data)
}

func parseTokens(path string, data []byte) ([]TokenInfo, error) {
	var out []TokenInfo
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		h, ok := strings.CutPrefix(f[0], "sha256:")
		if _, err := hex.DecodeString(h); !ok || err != nil || len(h) != 64 || len(f) < 2 || len(f) > 4 {
			return nil, fmt.Errorf("tokens %s:%d: want \"sha256:HASH NAME [TIME [machines=ID,…]]\"", path, n)
		}
		t := TokenInfo{Hash: h, Name: f[1]}
		if len(f) >= 3 {
			t.Made = f[2]
		}
		if len(f) == 4 {
			ms, ok := strings.CutPrefix(f[3], machinesField)
			if !ok || ms == "" {
				return nil, fmt.Errorf("tokens %s:%d: a fourth field is %sID,…", path, n, machinesField)
			}
			t.Machines = strings.Split(ms, ",")
		}
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tokens %s: %w", path, err)
	}
	return out, nil
}

// RevokeTokens removes from the tokens file every token named who or,
// when none is, the one token whose ID (see TokenInfo.ID) or hash begins
// with who (at least MinIDPrefix hex digits), and returns the tokens
// removed. A prefix that begins several tokens' IDs revokes none and
// says which. The file is replaced atomically and stays 0600; revoking
// nothing is an error.
func RevokeTokens(path, who string) ([]TokenInfo, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokens: %w", err)
	}
	all, err := parseTokens(path, data)
	if err != nil {
		return nil, err
	}
	match, err := revoked(all, who)
	if err != nil {
		return nil, fmt.Errorf("tokens %s: %w", path, err)
	}
	var keep bytes.Buffer
	var gone []TokenInfo
	for line := range strings.SplitSeq(strings.TrimSuffix(string(data), "\n"), "\n") {
		ts, _ := parseTokens(path, []byte(line))
		if len(ts) == 1 && match(ts[0]) {
			gone = append(gone, ts[0])
			continue
		}
		keep.WriteString(line + "\n")
	}
	if err := atomicfile.ReplacePerm(path, keep.Bytes(), 0o600); err != nil {
		return nil, err
	}
	return gone, nil
}

// MinIDPrefix is the fewest hex digits of an ID that revoke a token by
// its ID's beginning.
const MinIDPrefix = 4

// revoked is which of ts who revokes: those named who, else the one
// whose hash begins with who. A prefix of several, or of none, is an
// error.
func revoked(ts []TokenInfo, who string) (func(TokenInfo) bool, error) {
	for _, t := range ts {
		if t.Name == who {
			return func(t TokenInfo) bool { return t.Name == who }, nil
		}
	}
	prefix := strings.ToLower(who)
	if len(prefix) < MinIDPrefix || strings.Trim(prefix, "0123456789abcdef") != "" {
		return nil, fmt.Errorf("no token is named %q, and it is not the beginning of an ID (at least %d hex digits; token list shows them)", who, MinIDPrefix)
	}
	var ids []string
	for _, t := range ts {
		if strings.HasPrefix(strings.ToLower(t.Hash), prefix) {
			ids = append(ids, t.ID())
		}
	}
	switch len(ids) {
	case 0:
		return nil, fmt.Errorf("no token is named %q or has an ID beginning with it (token list shows them)", who)
	case 1:
		return func(t TokenInfo) bool { return strings.HasPrefix(strings.ToLower(t.Hash), prefix) }, nil
	}
	return nil, fmt.Errorf("%q begins the IDs of %d tokens (%s): give more of the one to revoke", who, len(ids), strings.Join(ids, ", "))
}

// Tokens checks upload tokens against a tokens file, read again whenever
// it changes: a token made while the server runs works at once, and one
// revoked stops working at once. A file that cannot be read or parsed
// any more fails closed: no token is accepted until it is repaired.
type Tokens struct {
	path string
	// Log, when set, is told when the file fails and when it is read
	// again.
	Log *log.Logger

	mu     sync.Mutex
	mtime  time.Time
	size   int64
	ino    uint64
	hashes map[string]TokenInfo // by hash
	err    error                // why the file was last unreadable
}

// ErrUnknownToken is Lookup's error for a token the file does not hold.
var ErrUnknownToken = errors.New("unknown token")

// LoadTokens reads a tokens file. A file that is missing or has a
// malformed line is an error.
func LoadTokens(path string) (*Tokens, error) {
	t := &Tokens{path: path}
	if err := t.reload(); err != nil {
		return nil, err
	}
	return t, nil
}

// reload reads the file again if it changed. On failure no token is
// known until a read succeeds.
func (t *Tokens) reload() error {
	st, err := os.Stat(t.path)
	if err == nil && t.err == nil && t.hashes != nil && st.ModTime().Equal(t.mtime) && st.Size() == t.size && inode(st) == t.ino {
		return nil
	}
	var ts []TokenInfo
	if err == nil {
		ts, err = ReadTokens(t.path)
	} else {
		err = fmt.Errorf("tokens: %w (the token new command makes %s)", err, t.path)
	}
	if err != nil {
		if t.Log != nil && (t.err == nil || t.err.Error() != err.Error()) {
			t.Log.Printf("%v: refusing every upload until the tokens file is readable", err)
		}
		t.hashes, t.err = nil, err
		return err
	}
	if t.err != nil && t.Log != nil {
		t.Log.Printf("tokens %s: readable again (%d tokens)", t.path, len(ts))
	}
	hashes := make(map[string]TokenInfo, len(ts))
	for _, x := range ts {
		hashes[x.Hash] = x
	}
	t.hashes, t.err, t.mtime, t.size, t.ino = hashes, nil, st.ModTime(), st.Size(), inode(st)
	return nil
}

// Lookup is what the file says of token: its owner's name and the
// machines it is bound to. Its error is ErrUnknownToken for a token the
// file does not hold, or why the file cannot be read.
func (t *Tokens) Lookup(token string) (TokenInfo, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.reload(); err != nil {
		return TokenInfo{}, err
	}
	h := hashToken(token)
	for known, info := range t.hashes {
		if subtle.ConstantTimeCompare([]byte(known), []byte(h)) == 1 {
			return info, nil
		}
	}
	return TokenInfo{}, ErrUnknownToken
}

// inode is the file's inode number (0 where the system has none): a
// file replaced by another of the same size and time is still read again.
func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}
