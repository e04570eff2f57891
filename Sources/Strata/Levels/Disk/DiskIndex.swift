/// What the disk level knows about one entry file.
struct DiskIndexEntry: Equatable, Sendable {
    /// Bytes of the file (header, key and value).
    var size: Int
    /// Expiry in ns since 1970, or 0 for none.
    var expiresAt: Int64
    /// The version of the file this entry describes.
    var fingerprint: EntryFingerprint
}

/// The disk level's own index: entries by ``EntryID`` in a doubly linked
/// least-recently-used list (indices into `nodes`, most recent at `head`),
/// with the total size of the files it knows.
///
/// Not thread-safe: ``DiskCacheLevel`` keeps it behind its lock.
struct DiskIndex: Sendable {
    private struct Node: Sendable {
        var id: EntryID
        var entry: DiskIndexEntry
        var prev: Int32
        var next: Int32
    }

    private var positions: [EntryID: Int32] = [:]
    private var nodes: [Node] = []
    private var free: [Int32] = []
    private var head: Int32 = -1
    private var tail: Int32 = -1
    /// Sum of the sizes of the entries.
    private(set) var totalSize = 0

    /// Entries in the index.
    var count: Int { positions.count }

    /// The entry for `id`, if known.
    func find(_ id: EntryID) -> DiskIndexEntry? {
        positions[id].map { nodes[Int($0)].entry }
    }

    /// Marks `id` most recently used.
    mutating func touch(_ id: EntryID) {
        guard let i = positions[id], head != i else { return }
        unlink(i)
        pushFront(i)
    }

    /// Adds or replaces `id` as the most recently used entry.
    mutating func insert(_ id: EntryID, _ entry: DiskIndexEntry) {
        if let i = positions[id] {
            totalSize += entry.size - nodes[Int(i)].entry.size
            nodes[Int(i)].entry = entry
            touch(id)
            return
        }
        let node = Node(id: id, entry: entry, prev: -1, next: -1)
        let i: Int32
        if let reused = free.popLast() {
            i = reused
            nodes[Int(i)] = node
        } else {
            i = Int32(nodes.count)
            nodes.append(node)
        }
        positions[id] = i
        totalSize += entry.size
        pushFront(i)
    }

    /// Replaces what is known of `id` (another writer rewrote it) without
    /// changing its place in the order.
    mutating func update(_ id: EntryID, _ entry: DiskIndexEntry) {
        guard let i = positions[id] else { return }
        totalSize += entry.size - nodes[Int(i)].entry.size
        nodes[Int(i)].entry = entry
    }

    /// Removes `id`; returns what was known of it.
    @discardableResult
    mutating func remove(_ id: EntryID) -> DiskIndexEntry? {
        guard let i = positions.removeValue(forKey: id) else { return nil }
        unlink(i)
        free.append(i)
        totalSize -= nodes[Int(i)].entry.size
        return nodes[Int(i)].entry
    }

    /// Removes and returns the least recently used entry.
    mutating func popLeastRecent() -> (id: EntryID, entry: DiskIndexEntry)? {
        guard tail >= 0 else { return nil }
        let node = nodes[Int(tail)]
        remove(node.id)
        return (node.id, node.entry)
    }

    /// Entries whose expiry is at or before `now`.
    func expired(now: Int64) -> [(id: EntryID, entry: DiskIndexEntry)] {
        positions.values.compactMap { i in
            let node = nodes[Int(i)]
            return node.entry.expiresAt != 0 && now >= node.entry.expiresAt ? (node.id, node.entry) : nil
        }
    }

    private mutating func unlink(_ i: Int32) {
        let prev = nodes[Int(i)].prev, next = nodes[Int(i)].next
        if prev >= 0 { nodes[Int(prev)].next = next } else { head = next }
        if next >= 0 { nodes[Int(next)].prev = prev } else { tail = prev }
        nodes[Int(i)].prev = -1
        nodes[Int(i)].next = -1
    }

    private mutating func pushFront(_ i: Int32) {
        nodes[Int(i)].prev = -1
        nodes[Int(i)].next = head
        if head >= 0 { nodes[Int(head)].prev = i }
        head = i
        if tail < 0 { tail = i }
    }
}
