package storage

// Tamper hooks for the memory backend's contract test (package storage_test): they change
// the raw state the way a faulty store could, bypassing the Backend API.

// SetRecordForTest replaces the raw record of key (nil deletes it).
func (m *MemoryBackend) SetRecordForTest(key RecordKey, rec *StoredRecord) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if rec == nil {
		delete(m.records, key)
		return
	}
	m.records[key] = *rec
}

// SetFloorForTest sets the raw revision floor of key.
func (m *MemoryBackend) SetFloorForTest(key RecordKey, floor uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.floors[key] = floor
}

// SetFenceForTest sets the raw fencing token of key.
func (m *MemoryBackend) SetFenceForTest(key RecordKey, fence uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fences[key] = fence
}
