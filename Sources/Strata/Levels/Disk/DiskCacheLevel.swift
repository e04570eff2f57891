import Dispatch
import Foundation
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A persistent level: one file per entry in a directory of its own.
///
/// - **Format:** each file holds a 56-byte header (key and value lengths,
///   expiry, last access, checksum), the key, then the value encoded by a
///   ``CacheCodec``. File names are a stable 128-bit hash of the key (and the
///   codec's name, so differently-typed caches never share a file); the
///   stored key detects hash collisions. Keys may be any bytes: `/`, `..`,
///   binary and very long keys are only ever hashed.
/// - **Writes** go to a temporary file renamed over the entry, so a reader (or
///   a crash) never sees half an entry. A failed write (disk full) throws and
///   leaves the previous entry intact.
/// - **Capacity** counts file bytes (header + key + value). Eviction removes the
///   least recently used entries by our own recorded access time (not
///   atime/mtime, which Linux does not keep reliably). Size accounting is
///   signed and rebuilt from the directory at start, so files deleted behind
///   its back only make a later read a miss.
/// - **Corrupt, truncated or foreign files** read as a miss, are deleted and
///   counted (``corruptEntriesRemoved``). A value that fails to *decode* is a
///   miss and counted (``decodeFailures``) but left for whoever wrote it.
/// - **Processes:** several may share a directory: entries are replaced
///   atomically, temporary files carry the writer's pid (only a dead writer's
///   leftovers are cleaned), and start-up and `clear()` hold an advisory
///   `flock` on `.lock`. An entry another process wrote is found on first read.
/// - **Threads:** reads and writes of entries up to 64 KiB run on the caller
///   (page-cache IO of that size takes microseconds); larger ones run on a
///   dedicated Dispatch queue so they do not hold a cooperative thread.
public final class DiskCacheLevel<Key: Sendable, Value: Sendable>: ExpirableCacheLevel {
    struct Meta: Sendable {
        var expiresAt: Int64
    }

    struct Index: Sendable {
        var lru = LRUShardState<EntryID, Meta>()
        var totalSize = 0
        var lastStamp: UInt64 = 0
        var dirtyAccess: [EntryID: Int64] = [:]
        var corruptRemoved = 0
        var decodeFailures = 0
        var evictions = 0

        mutating func stamp(now: Int64) -> UInt64 {
            lastStamp = max(UInt64(max(now, 0)), lastStamp &+ 1)
            return lastStamp
        }

        /// Removes `id` from the index; returns the size it had.
        @discardableResult
        mutating func forget(_ id: EntryID) -> Int {
            guard let i = lru.find(HashedKey(id)) else { return 0 }
            let size = lru.removeNode(i)
            totalSize -= size
            dirtyAccess[id] = nil
            return size
        }

        mutating func record(_ id: EntryID, size: Int, expiresAt: Int64, stamp: UInt64) {
            forget(id)
            lru.insert(LRUNode(key: HashedKey(id), value: Meta(expiresAt: expiresAt), cost: size,
                               expiresAt: expiresAt, stamp: stamp))
            totalSize += size
        }
    }

    /// Entries up to this many bytes are read and written on the caller's thread.
    public static var inlineIOLimit: Int { 64 * 1024 }
    static var ioQueue: DispatchQueue { diskIOQueue }

    public let directory: URL
    public let capacity: Int
    public let name: String
    public let clock: any CacheClock
    public let codec: CacheCodec<Value>
    let defaultTTL: Duration?
    let keyBytes: @Sendable (Key) -> [UInt8]
    let path: String
    let index = Mutex(Index())
    let logger: Logger

    /// A disk level in `directory` (created if missing) holding at most
    /// `capacity` bytes of files. Throws ``DiskCacheError/directoryNotWritable(path:errno:)``
    /// when the directory cannot be created or written; anything else found in
    /// it (garbage files, stale temporary files, corrupt entries) is cleaned up.
    public init(
        name: String = "disk",
        directory: URL? = nil,
        capacity: Int,
        codec: CacheCodec<Value>,
        defaultTTL: Duration? = nil,
        clock: any CacheClock = SystemClock(),
        keyBytes: @escaping @Sendable (Key) -> [UInt8]
    ) throws {
        precondition(capacity >= 0, "capacity must not be negative")
        let directory = directory ?? Self.defaultDirectory(name: name)
        self.directory = directory
        self.path = directory.path
        self.capacity = capacity
        self.name = name
        self.clock = clock
        self.codec = codec
        self.defaultTTL = defaultTTL
        let codecName = codec.name
        // The codec's name is part of the file name: two caches of different
        // value types on one directory never read (or delete) each other's files.
        self.keyBytes = { key in Array(codecName.utf8) + [0] + keyBytes(key) }
        self.logger = Logger(label: "strata.disk")
        if let code = FileIO.makeDirectory(path) {
            throw DiskCacheError.directoryNotWritable(path: path, errno: code)
        }
        rebuildIndex()
    }

    /// `$XDG_CACHE_HOME/strata/<name>`, else `~/.cache/strata/<name>`.
    public static func defaultDirectory(name: String) -> URL {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSTemporaryDirectory()) + "/.cache")
        let safe = String(name.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" })
        return URL(fileURLWithPath: base).appendingPathComponent("strata").appendingPathComponent(safe)
    }

    // MARK: Reading

    public func get(_ key: Key) async throws -> Value {
        guard let value = try await getIfPresent(key) else { throw FetchError.valueNotInCache }
        return value
    }

    public func getIfPresent(_ key: Key) async throws -> Value? {
        try Task.checkCancellation()
        let bytes = keyBytes(key)
        let id = EntryID(keyBytes: bytes)
        let file = path + "/" + id.fileName
        let known = index.withLock { index in index.lru.find(HashedKey(id)).map { index.lru.nodes[Int($0)].cost } }
        let result: FileIO.ReadResult
        if (known ?? 0) <= Self.inlineIOLimit {
            result = FileIO.readFile(file, expected: known)
        } else {
            result = await offload { FileIO.readFile(file, expected: known) }
        }
        switch result {
        case .notFound:
            index.withLock { _ = $0.forget(id) }
            return nil
        case .failed(let code):
            throw DiskCacheError.readFailed(path: file, errno: code)
        case .bytes(let data):
            return try entryValue(data, keyBytes: bytes, id: id, file: file)
        }
    }

    private func entryValue(_ data: Data, keyBytes bytes: [UInt8], id: EntryID, file: String) throws -> Value? {
        let check = data.withUnsafeBytes { raw -> EntryCheck in
            guard let header = DiskEntryHeader.parse(raw), header.fileSize == raw.count,
                  header.keyLength <= raw.count else { return .corrupt }
            let keyRange = DiskEntryHeader.size..<(DiskEntryHeader.size + header.keyLength)
            let storedKey = UnsafeRawBufferPointer(rebasing: raw[keyRange])
            let storedValue = UnsafeRawBufferPointer(rebasing: raw[keyRange.upperBound...])
            guard DiskEntryHeader.checksum(key: storedKey, value: storedValue) == header.checksum else { return .corrupt }
            return storedKey.elementsEqual(bytes) ? .valid(header) : .otherKey
        }
        switch check {
        case .corrupt:
            removeCorrupt(id, file: file)
            return nil
        case .otherKey:
            return nil  // a hash collision: that file belongs to another key
        case .valid(let header):
            let now = clock.now().nanosecondsSince1970
            if header.expiresAt != 0 && now >= header.expiresAt {
                unlink(file)
                index.withLock { _ = $0.forget(id) }
                return nil
            }
            let valueStart = DiskEntryHeader.size + header.keyLength
            let value: Value
            do {
                value = try codec.decode(data.subdata(in: valueStart..<data.count))
            } catch {
                index.withLock { $0.decodeFailures += 1 }
                logger.debug("undecodable entry left in place", metadata: ["file": "\(file)", "error": "\(error)"])
                return nil
            }
            index.withLock { index in
                let stamp = index.stamp(now: now)
                if let i = index.lru.find(HashedKey(id)) {
                    index.lru.touch(i, stamp: stamp)
                    if index.lru.nodes[Int(i)].cost != data.count {  // rewritten by another process
                        index.totalSize += data.count - index.lru.nodes[Int(i)].cost
                        index.lru.nodes[Int(i)].cost = data.count
                    }
                } else {
                    index.record(id, size: data.count, expiresAt: header.expiresAt, stamp: stamp)
                }
                index.dirtyAccess[id] = now
            }
            flushAccessTimesIfNeeded()
            return value
        }
    }

    private func removeCorrupt(_ id: EntryID, file: String) {
        unlink(file)
        index.withLock { index in
            index.forget(id)
            index.corruptRemoved += 1
        }
        logger.notice("removed a corrupt cache entry", metadata: ["file": "\(file)"])
    }

    // MARK: Writing

    public func set(_ value: Value, forKey key: Key) async throws {
        try await set(value, forKey: key, expiresAt: nil)
    }

    public func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        try Task.checkCancellation()
        let encoded: Data
        do { encoded = try codec.encode(value) } catch {
            throw DiskCacheError.encodingFailed("\(codec.name): \(error)")
        }
        let bytes = keyBytes(key)
        let id = EntryID(keyBytes: bytes)
        let now = clock.now()
        let deadline = expiresAt ?? defaultTTL.map { now.advanced(by: $0) }
        let entry = DiskEntryHeader.encode(key: bytes, value: encoded,
                                           expiresAt: deadline?.nanosecondsSince1970 ?? 0,
                                           now: now.nanosecondsSince1970)
        guard entry.count <= capacity else { throw DiskCacheError.valueTooLarge(size: entry.count, capacity: capacity) }
        let file = path + "/" + id.fileName
        let directory = path
        let failure: Int32?
        if entry.count <= Self.inlineIOLimit {
            failure = FileIO.writeAtomically(entry, to: file, directory: directory)
        } else {
            failure = await offload { FileIO.writeAtomically(entry, to: file, directory: directory) }
        }
        if let failure { throw DiskCacheError.writeFailed(path: file, errno: failure) }
        let victims = index.withLock { index -> [EntryID] in
            index.record(id, size: entry.count, expiresAt: deadline?.nanosecondsSince1970 ?? 0,
                         stamp: index.stamp(now: now.nanosecondsSince1970))
            return Self.evict(&index, toSize: capacity)
        }
        deleteFiles(victims)
    }

    /// Pops least-recently-used entries until the index is within `size`.
    private static func evict(_ index: inout Index, toSize size: Int) -> [EntryID] {
        var victims: [EntryID] = []
        while index.totalSize > size, index.lru.tail >= 0 {
            let tail = index.lru.tail
            let id = index.lru.nodes[Int(tail)].key!.key
            index.forget(id)
            index.evictions += 1
            victims.append(id)
        }
        return victims
    }

    private func deleteFiles(_ ids: [EntryID]) {
        for id in ids { unlink(path + "/" + id.fileName) }
    }

    public func remove(_ key: Key) async throws {
        let id = EntryID(keyBytes: keyBytes(key))
        let file = path + "/" + id.fileName
        if unlink(file) != 0 && errno != ENOENT {
            throw DiskCacheError.writeFailed(path: file, errno: errno)
        }
        index.withLock { _ = $0.forget(id) }
    }

    /// Deletes every entry file in the directory (other processes' too) and
    /// dead writers' temporary files.
    public func clear() async {
        let path = self.path
        await offload {
            FileIO.withDirectoryLock(path) {
                for name in FileIO.listDirectory(path) where EntryID(fileName: name) != nil {
                    unlink(path + "/" + name)
                }
            }
        }
        index.withLock { index in
            let corrupt = index.corruptRemoved, failures = index.decodeFailures, evictions = index.evictions
            index = Index()
            index.corruptRemoved = corrupt
            index.decodeFailures = failures
            index.evictions = evictions
        }
    }

    /// Disk entries survive memory warnings; pending access times are written out.
    public func onMemoryWarning() async { flushAccessTimes() }

    @discardableResult
    public func removeExpired() async -> Int {
        let now = clock.now().nanosecondsSince1970
        let expired = index.withLock { index -> [EntryID] in
            var ids: [EntryID] = []
            for node in index.lru.nodes where node.key != nil && node.expiresAt != 0 && now >= node.expiresAt {
                ids.append(node.key!.key)
            }
            for id in ids { index.forget(id) }
            return ids
        }
        deleteFiles(expired)
        return expired.count
    }

    /// Evicts least-recently-used entries until at most `size` bytes remain.
    public func trim(toSize size: Int) async {
        let victims = index.withLock { Self.evict(&$0, toSize: max(size, 0)) }
        deleteFiles(victims)
    }

    // MARK: Facts

    /// Entries this level knows about.
    public var count: Int { index.withLock { $0.lru.liveCount } }
    /// Bytes of the files this level knows about (headers included).
    public var totalSize: Int { index.withLock { $0.totalSize } }
    /// Corrupt, truncated or foreign files deleted so far.
    public var corruptEntriesRemoved: Int { index.withLock { $0.corruptRemoved } }
    /// Entries that did not decode with this level's codec (left in place).
    public var decodeFailures: Int { index.withLock { $0.decodeFailures } }
    /// Entries evicted for capacity so far.
    public var evictions: Int { index.withLock { $0.evictions } }

    // MARK: Index

    /// Rebuilds the index from the directory: corrupt entries and dead
    /// writers' temporary files are deleted, expired entries dropped, and the
    /// rest ordered by their recorded last access.
    public func rebuildIndex() {
        let now = clock.now().nanosecondsSince1970
        var found: [(EntryID, Int, DiskEntryHeader)] = []
        var corrupt = 0
        FileIO.withDirectoryLock(path) {
            for name in FileIO.listDirectory(path) {
                let file = path + "/" + name
                if let owner = FileIO.temporaryOwner(name) {
                    if !FileIO.processIsAlive(owner) { unlink(file) }
                    continue
                }
                guard let id = EntryID(fileName: name) else { continue }  // not ours: leave it
                let prefix: Data, size: Int
                switch FileIO.readPrefix(file, count: DiskEntryHeader.size) {
                case .vanished: continue  // removed by another process meanwhile: not corrupt
                case .unreadable: continue  // permissions or I/O: leave it, it is not provably ours to delete
                case .bytes(let bytes, let length): (prefix, size) = (bytes, length)
                }
                guard let header = prefix.withUnsafeBytes({ DiskEntryHeader.parse($0) }), header.fileSize == size else {
                    unlink(file)
                    corrupt += 1
                    continue
                }
                if header.expiresAt != 0 && now >= header.expiresAt {
                    unlink(file)
                    continue
                }
                found.append((id, size, header))
            }
        }
        found.sort { $0.2.lastAccess < $1.2.lastAccess }
        let victims = index.withLock { index -> [EntryID] in
            let keepCorrupt = index.corruptRemoved, failures = index.decodeFailures, evictions = index.evictions
            index = Index()
            index.corruptRemoved = keepCorrupt + corrupt
            index.decodeFailures = failures
            index.evictions = evictions
            for (id, size, header) in found {
                index.record(id, size: size, expiresAt: header.expiresAt,
                             stamp: index.stamp(now: header.lastAccess))
            }
            return Self.evict(&index, toSize: capacity)
        }
        deleteFiles(victims)
    }

    /// Writes recorded access times into the entries' headers, so the LRU
    /// order survives a restart. Runs by itself every 256 reads.
    public func flushAccessTimes() {
        let dirty = index.withLock { index -> [EntryID: Int64] in
            defer { index.dirtyAccess = [:] }
            return index.dirtyAccess
        }
        for (id, time) in dirty {
            FileIO.writeInt64(time, at: DiskEntryHeader.lastAccessOffset, path: path + "/" + id.fileName)
        }
    }

    private func flushAccessTimesIfNeeded() {
        guard index.withLock({ $0.dirtyAccess.count >= 256 }) else { return }
        diskIOQueue.async { [weak self] in self?.flushAccessTimes() }
    }

    deinit { flushAccessTimes() }
}

/// What reading an entry file found.
enum EntryCheck {
    case valid(DiskEntryHeader)
    case corrupt
    case otherKey
}

/// Entry IO larger than ``DiskCacheLevel/inlineIOLimit`` runs here.
let diskIOQueue = DispatchQueue(label: "strata.disk-io", qos: .utility, attributes: .concurrent)

/// Runs blocking `work` on the disk IO queue and resumes with its result.
func offload<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        diskIOQueue.async { continuation.resume(returning: work()) }
    }
}

extension DiskCacheLevel where Key: CacheKeyConvertible {
    /// A disk level with an explicit codec.
    public convenience init(
        name: String = "disk", directory: URL? = nil, capacity: Int, codec: CacheCodec<Value>,
        defaultTTL: Duration? = nil, clock: any CacheClock = SystemClock()
    ) throws {
        try self.init(name: name, directory: directory, capacity: capacity, codec: codec,
                      defaultTTL: defaultTTL, clock: clock, keyBytes: { $0.cacheKeyBytes })
    }
}

extension DiskCacheLevel where Key: CacheKeyConvertible, Value == Data {
    /// Raw `Data` values, stored as they are.
    public convenience init(
        name: String = "disk", directory: URL? = nil, capacity: Int,
        defaultTTL: Duration? = nil, clock: any CacheClock = SystemClock()
    ) throws {
        try self.init(name: name, directory: directory, capacity: capacity, codec: .data,
                      defaultTTL: defaultTTL, clock: clock)
    }
}

extension DiskCacheLevel where Key: CacheKeyConvertible, Value == String {
    /// UTF-8 `String` values.
    public convenience init(
        name: String = "disk", directory: URL? = nil, capacity: Int,
        defaultTTL: Duration? = nil, clock: any CacheClock = SystemClock()
    ) throws {
        try self.init(name: name, directory: directory, capacity: capacity, codec: .string,
                      defaultTTL: defaultTTL, clock: clock)
    }
}

extension DiskCacheLevel where Key: CacheKeyConvertible, Value: Codable {
    /// `Codable` values as JSON.
    public convenience init(
        name: String = "disk", directory: URL? = nil, capacity: Int,
        defaultTTL: Duration? = nil, clock: any CacheClock = SystemClock()
    ) throws {
        try self.init(name: name, directory: directory, capacity: capacity, codec: .json(),
                      defaultTTL: defaultTTL, clock: clock)
    }
}
