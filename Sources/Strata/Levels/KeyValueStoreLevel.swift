import Foundation
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small persistent named domain (the Linux counterpart of Carlos's
/// `NSUserDefaultsCacheLevel`): all entries in one binary property list,
/// `<directory>/<name>.plist`, with an in-memory soft copy (all that
/// `onMemoryWarning` drops). Keys are stored by their bytes (base64).
///
/// - **Processes (and levels on one domain) agree**: each operation reloads if
///   the file's identity (inode, size, mtime) changed (the version read is held
///   open so no later one gets its inode: `OpenFileVersion`); writes hold an
///   `flock` on the directory and change the latest file: no update is lost.
/// - Every write rewrites the file durably (temporary file, fsync, rename,
///   directory fsync): for small domains (settings, tokens, feature data),
///   not bulk data. Files 0600, directories 0700.
/// - A failed write (disk full) throws ``DiskCacheError/writeFailed(path:errno:)``
///   and removes only the value it would have replaced (unless even that
///   fails, as on a read-only disk).
/// - A missing file or directory is an empty domain; any other read failure
///   throws ``DiskCacheError/readFailed(path:errno:)``, leaving the file. One
///   that is not a domain is moved aside to `<name>.plist.corrupt-<seconds>[-n]`
///   (never overwriting another) and the domain starts empty.
/// - A remove or clear leaves a tombstone in the domain: a back-fill whose
///   read began before it, in any process, is declined (see
///   `KeyValueStoreLevel+Tombstones.swift`).
public final class KeyValueStoreLevel<Key: CacheKeyConvertible, Value: Sendable>: ExpirableCacheLevel {
    struct Entry: Codable, Equatable, Sendable {
        var value: Data
        var expiresAt: Int64?

        func isExpired(at now: Int64) -> Bool { expiresAt.map { now >= $0 } ?? false }
    }

    public let name: String
    /// The domain's property list, `<directory>/<name>.plist` (a character of
    /// `name` other than a letter, digit, `-`, `_` or `.` becomes `_`).
    public let file: URL
    public let clock: any CacheClock
    /// How values become the bytes stored in the domain.
    public let codec: CacheCodec<Value>
    let defaultTTL: Duration?
    /// The soft copy and the file version it was read from (`nil`: no file).
    private struct Snapshot {
        var entries: [String: Entry]
        var version: OpenFileVersion?
        var identity: FileIO.Identity? { version?.identity }
    }
    private let soft = Mutex<Snapshot?>(nil)
    private let writes = Mutex(())
    private let logger = Logger(label: "strata.kv")

    /// The domain `name`, in ``file``; the directory is created here, the
    /// file read at the first operation.
    ///
    /// - Parameters:
    ///   - name: the domain; also the file name.
    ///   - directory: default `$XDG_CACHE_HOME/strata`; created 0700 if missing.
    ///   - codec: how values become bytes in the file.
    ///   - defaultTTL: how long a set keeps its value when it gives no deadline (`nil`: until removed).
    ///   - clock: where expiry reads the time (a ``TestClock`` in tests).
    public init(name: String, directory: URL? = nil, codec: CacheCodec<Value>, defaultTTL: Duration? = nil,
                clock: any CacheClock = SystemClock()) throws {
        let directory = directory ?? DiskCacheLevel<String, Data>.defaultDirectory(name: "kv").deletingLastPathComponent()
        if let code = FileIO.makeDirectory(directory.path) {
            throw DiskCacheError.directoryNotWritable(path: directory.path, errno: code)
        }
        let safe = String(name.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." ? $0 : "_" })
        self.name = name
        self.file = directory.appendingPathComponent(safe + ".plist")
        self.codec = codec
        self.defaultTTL = try ExpiryError.checked(defaultTTL, role: "defaultTTL")
        self.clock = clock
    }

    static func storageKey(_ key: Key) -> String { Data(key.cacheKeyBytes).base64EncodedString() }

    /// The domain: the soft copy if the file is unchanged, else read (failures not cached).
    func domain() throws -> [String: Entry] {
        let identity = FileIO.identity(file.path)
        if let copy = soft.withLock({ $0 }), copy.identity == identity { return copy.entries }
        // Opened before reading: a change meanwhile shows as a new identity.
        let version = OpenFileVersion(path: file.path)
        let loaded = try load()
        soft.withLock { $0 = Snapshot(entries: loaded, version: version) }
        return loaded
    }

    private func load() throws -> [String: Entry] {
        let data: Data
        switch FileIO.readFile(file.path) {
        case .notFound: return [:]
        case .failed(let code): throw DiskCacheError.readFailed(path: file.path, errno: code)
        case .bytes(let bytes): data = bytes
        }
        do {
            return try PropertyListDecoder().decode([String: Entry].self, from: data)
        } catch {
            let aside = try moveAside()
            logger.warning("unreadable domain file moved aside", metadata: ["file": "\(file.path)", "to": "\(aside)"])
            return [:]
        }
    }

    /// Moves the file to a fresh `<file>.corrupt-<seconds>[-n]` and returns it; the
    /// name is reserved first (`O_EXCL`), so the rename never replaces another.
    private func moveAside() throws -> String {
        let base = file.path + ".corrupt-\(clock.now().nanosecondsSince1970 / 1_000_000_000)"
        for attempt in 0..<10_000 {
            let aside = attempt == 0 ? base : base + "-\(attempt)"
            let fd = open(aside, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd < 0 {
                if errno == EEXIST { continue }
                throw DiskCacheError.writeFailed(path: aside, errno: errno)
            }
            close(fd)
            if rename(file.path, aside) != 0 {
                let code = errno
                unlink(aside)
                if code == ENOENT { return aside }  // another reader moved it first
                throw DiskCacheError.writeFailed(path: aside, errno: code)
            }
            return aside
        }
        throw DiskCacheError.writeFailed(path: base, errno: EEXIST)
    }

    /// Applies `change` to the latest file under the locks and writes it (the
    /// soft copy updated only on success); if that fails (disk full), applies
    /// `fallback` under the same locks (undoing no other writer's change) and
    /// throws. A deleted directory is recreated first (its entries went with it).
    private func mutate(_ change: (inout [String: Entry]) -> Void,
                        orElse fallback: ((inout [String: Entry]) -> Void)? = nil) throws {
        let directory = file.deletingLastPathComponent().path
        if !FileIO.directoryExists(directory), let code = FileIO.makeDirectory(directory) {
            throw DiskCacheError.directoryNotWritable(path: directory, errno: code)
        }
        try writes.withLock { _ in
            try FileIO.withLockOnDirectory(directory) {
                let current = try domain()
                do {
                    try write(current, change, directory: directory)
                } catch {
                    if let fallback { try? write(current, fallback, directory: directory) }
                    throw error
                }
            }
        }
    }

    /// Writes `entries` changed by `change` as the file, and keeps them as the soft copy.
    private func write(_ entries: [String: Entry], _ change: (inout [String: Entry]) -> Void, directory: String) throws {
        var updated = entries
        change(&updated)
        if updated == entries { return }
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        let bytes = [UInt8](try encoder.encode(updated))
        if let code = FileIO.writeAtomically(bytes, to: file.path, directory: directory, durable: true) {
            throw DiskCacheError.writeFailed(path: file.path, errno: code)
        }
        let version = OpenFileVersion(path: file.path)
        soft.withLock { $0 = Snapshot(entries: updated, version: version) }
    }

    public func getIfPresent(_ key: Key) async throws -> Value? {
        try await entry(forKey: key)?.value
    }

    /// The value with its expiry, so a level above back-fills it with the time it has left.
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        let storageKey = Self.storageKey(key)
        guard let entry = try domain()[storageKey] else { return nil }
        let now = clock.now().nanosecondsSince1970
        if entry.isExpired(at: now) {
            // Only if still expired in the latest file (another writer may have stored since).
            try? mutate { entries in
                if entries[storageKey]?.isExpired(at: now) == true { entries[storageKey] = nil }
            }
            CacheContext.noteExpired()
            return nil
        }
        return CacheEntry(value: try codec.decoded(entry.value),
                          expiresAt: entry.expiresAt.map { CacheInstant(nanosecondsSince1970: $0) })
    }

    public func set(_ value: Value, forKey key: Key) async throws {
        try await set(value, forKey: key, expiresAt: nil)
    }

    public func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        try await store(value, forKey: key, expiresAt: expiresAt, landing: nil)
    }

    /// A back-fill keeps the lower entry's deadline, capped at this level's
    /// TTL. It replaces no live value, and is declined (``BackfillDeclined``)
    /// if its key was removed, or the domain cleared, by any process since
    /// its read began, or recently when it does not say (the tombstones).
    public func backfill(_ fill: Backfill<Value>, forKey key: Key) async throws {
        try await store(fill.value, forKey: key, expiresAt: fill.expiresAt,
                        landing: Landing(readStart: fill.readStartedAt.map(DiskTombstones.wallTime(of:))))
    }

    private func store(_ value: Value, forKey key: Key, expiresAt: CacheInstant?,
                       landing: Landing?) async throws {
        let backfill = landing != nil
        let encoded: Data
        do { encoded = try codec.encoded(value) } catch {
            try? await remove(key)  // a failed set leaves no older value to serve
            throw error
        }
        let deadline = StoredDeadline.resolve(given: expiresAt, backfill: backfill) { defaultTTL.map { clock.now().advanced(by: $0) } }
        // At or before 1970 is already past (never "no expiry"). A failed write
        // drops the old value instead (a smaller file may still fit). A back-fill
        // replaces no live value: it was stored after the read missed (``Backfill``).
        let storageKey = Self.storageKey(key)
        var declined = false
        try mutate({ entries in
            if let landing, entries[storageKey].map({ !$0.isExpired(at: clock.now().nanosecondsSince1970) }) ?? false
                || Tombstones.forbid(storageKey, readStart: landing.readStart, in: entries) {
                declined = true
                return
            }
            entries[storageKey] = Entry(value: encoded, expiresAt: deadline.map { max($0.nanosecondsSince1970, 1) })
        }, orElse: { $0[storageKey] = nil })
        if declined { throw BackfillDeclined() }
    }

    /// Deletes `key`'s value and leaves its tombstone, even when it held none
    /// (a back-fill begun before may be on its way).
    public func remove(_ key: Key) async throws {
        let storageKey = Self.storageKey(key)
        try mutate { entries in
            entries[storageKey] = nil
            Tombstones.record(storageKey, in: &entries)
        }
    }

    /// Empties the domain, leaving the tombstone of a clear; a file that
    /// cannot be read is left (failure logged).
    public func clear() async {
        do { try mutate { $0.removeAll(); Tombstones.record(nil, in: &$0) } } catch {
            logger.warning("clearing the domain failed", metadata: ["file": "\(file.path)", "error": "\(error)"])
        }
    }

    /// Empties the domain, without suspending (see ``CacheLevel/lostCoherence()``).
    public func lostCoherence() {
        do { try mutate { $0.removeAll(); Tombstones.record(nil, in: &$0) } } catch {
            logger.warning("emptying the domain failed", metadata: ["file": "\(file.path)", "error": "\(error)"])
        }
    }

    /// Drops the in-memory copy; the file stays.
    public func onMemoryWarning() async { soft.withLock { $0 = nil } }

    /// Whether the soft copy is loaded (for tests and tools).
    package var isLoaded: Bool { soft.withLock { $0 != nil } }

    /// Entries in the domain; 0 when the file cannot be read.
    public var count: Int { (try? domain().keys.count { !Tombstones.isTombstone($0) }) ?? 0 }

    @discardableResult
    public func removeExpired() async -> Int {
        let now = clock.now().nanosecondsSince1970
        var removed = 0
        try? mutate { domain in
            Tombstones.sweep(&domain)
            for (key, entry) in domain where entry.isExpired(at: now) {
                domain[key] = nil
                removed += 1
            }
        }
        return removed
    }
}

extension KeyValueStoreLevel where Value == Data {
    /// The domain `name`, holding bytes as they are (``CacheCodec/data``).
    public convenience init(name: String, directory: URL? = nil, defaultTTL: Duration? = nil,
                            clock: any CacheClock = SystemClock()) throws {
        try self.init(name: name, directory: directory, codec: .data, defaultTTL: defaultTTL, clock: clock)
    }
}

extension KeyValueStoreLevel where Value == String {
    /// The domain `name`, holding UTF-8 text (``CacheCodec/string``).
    public convenience init(name: String, directory: URL? = nil, defaultTTL: Duration? = nil,
                            clock: any CacheClock = SystemClock()) throws {
        try self.init(name: name, directory: directory, codec: .string, defaultTTL: defaultTTL, clock: clock)
    }
}

extension KeyValueStoreLevel where Value: Codable {
    /// The domain `name`, holding values as JSON (``CacheCodec/json(encoder:decoder:)``).
    public convenience init(name: String, directory: URL? = nil, defaultTTL: Duration? = nil,
                            clock: any CacheClock = SystemClock()) throws {
        try self.init(name: name, directory: directory, codec: .json(), defaultTTL: defaultTTL, clock: clock)
    }
}
