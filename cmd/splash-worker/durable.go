package main

import "github.com/splashv5/conform/impl/storage"

// etcdScheme starts a --journal value that names an etcd cluster.
const etcdScheme = "etcd://"

// durableBackend is a journal backend that holds resources until closed.
type durableBackend interface {
	storage.Backend
	Close() error
}
