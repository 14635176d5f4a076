// Package storage is the host-side authenticated record store of Splash worker
// protocol v5.
//
// A record is addressed by a [RecordKey] (namespace and name). Its payload is
// wrapped in a small JSON envelope that carries a storage key identifier, the
// record revision and a BLAKE3 keyed tag binding the payload to its location
// and revision. The envelope bytes are byte-for-byte those of the Rust
// reference implementation.
//
// Persistence is delegated to a [Backend]: an atomic compare-and-swap register
// per record key with a rollback floor and a fencing token. This package
// provides [MemoryBackend] (process-local, for tests); the durable backends
// live in packages of their own, so that a program links only the one it
// imports: logstore (one append-only log file, one sync per change), boltstore
// (one bbolt file) and sqlitestore (one SQLite file), all safe for several
// processes sharing the file, and etcdstore. Package storagetest holds the
// contract every backend's tests run.
//
// [AuthenticatedStore] combines a Backend with a [Keyring] and checks every
// record it loads, in the reference order, before returning it.
//
// Fencing tokens must be allocated with ReserveFence (or an equivalent atomic
// authority), never computed as CurrentFence()+1.
package storage
