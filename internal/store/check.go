package store

import (
	"context"
	"fmt"
	"os"
	"syscall"
)

// fileID identifies a file: its device and inode.
type fileID struct{ dev, ino uint64 }

func idOf(fi os.FileInfo) (fileID, uint64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, 1
	}
	return fileID{uint64(st.Dev), st.Ino}, uint64(st.Nlink)
}

// holdFile opens a SQLite store's file and keeps it open: while it is
// held its inode cannot be reused, so a file removed (no link left) or
// replaced (the path names another inode) is seen by checkFile.
func (s *Store) holdFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	s.path, s.held = path, f
	return nil
}

// Check reports whether the store can serve: the database answers a
// query of its schema and, for SQLite, the store's path still names the
// file Open opened. Its errors wrap ErrUnavailable.
func (s *Store) Check(ctx context.Context) error {
	if err := s.checkFile(); err != nil {
		return err
	}
	var v int
	if err := s.db.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v); err != nil {
		return unavailable("checking the store", err)
	}
	return nil
}

// checkFile fails once a SQLite store's file has been removed or
// replaced: what is written after that goes to a file nobody will open
// again, so from then on every write is refused (and Check fails) until
// the store is opened anew.
func (s *Store) checkFile() error {
	if s.held == nil {
		return nil
	}
	if e := s.gone.Load(); e != nil {
		return *e
	}
	what := ""
	if fi, err := s.held.Stat(); err != nil {
		what = fmt.Sprintf("cannot be examined (%v)", err)
	} else if held, links := idOf(fi); links == 0 {
		what = "was removed"
	} else if pi, err := os.Stat(s.path); err != nil {
		what = fmt.Sprintf("is gone (%v)", err)
	} else if now, _ := idOf(pi); now != held {
		what = "was replaced by another file"
	}
	if what == "" {
		return nil
	}
	e := fmt.Errorf("%w: the store's file %s %s since it was opened: it refuses every write until the server opens a store again", ErrUnavailable, s.path, what)
	s.gone.CompareAndSwap(nil, &e)
	return *s.gone.Load()
}
