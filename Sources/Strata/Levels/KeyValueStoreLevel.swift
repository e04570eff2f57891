import Foundation
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small persistent named domain (the Linux counterpart of Carlos's
/// `NSUserDefaultsCacheLevel`): every entry of the domain lives in one binary
/// property-list file, `<directory>/<name>.plist`, with an in-memory soft copy.
///
/// - `remove` removes from this domain's file (Carlos removed from the wrong place).
/// - `onMemoryWarning` drops the soft copy only; the next read reloads the file.
/// - **Processes (and several levels on one domain) agree**: every operation
///   checks the file's identity (inode, size, modification time) and reloads
///   the soft copy when someone else replaced the file (the version read is
///   kept open, so no later version can get its inode: ``OpenFileVersion``); writes hold an `flock`
///   on the directory and apply their change to the latest file, so no
///   writer's update is lost.
/// - Every write rewrites the file durably (temporary file, fsync, rename,
///   fsync of the directory), so it suits small domains (settings, tokens,
///   feature data), not bulk data. Files are created 0600, directories 0700.
/// - A set whose write fails (a full disk) throws
///   ``DiskCacheError/writeFailed(path:errno:)`` and removes the value it
///   would have replaced; every other entry stays. (When not even the smaller
///   file can be written, as on a read-only disk, the file stays as it was.)
/// - A deleted directory is an empty domain; the next write recreates it.
/// - Only a missing file is an empty domain. Any other read failure throws
///   ``DiskCacheError/readFailed(path:errno:)`` from the operation and leaves
///   the file as it is; the next operation reads it again.
/// - A file that reads but is not a domain is moved aside to
///   `<name>.plist.corrupt-<seconds>` (`-1`, `-2`, … when taken; aside files
///   never overwrite each other) and the domain starts empty.
/// - Keys are stored by their bytes (base64), so any key is safe.
public final class KeyValueStoreLevel<Key: CacheKeyConvertible, Value: Sendable>: ExpirableCacheLevel {
    struct Entry: Codable, Equatable {
        var value: Data
        var expiresAt: Int64?

        func isExpired(at now: Int64) -> Bool { expiresAt.map { now >= $0 } ?? false }
    }

    public let name: String
    public let file: URL
    public let clock: any CacheClock
    public let codec: CacheCodec<Value>
    let defaultTTL: Duration?
    /// The soft copy and the version of the file it was read from.
    private struct Snapshot {
        var entries: [String: Entry]
        /// The file version the entries were read from (`nil`: no file).
        var version: OpenFileVersion?
        var identity: FileIO.Identity? { version?.identity }
    }
    private let soft = Mutex<Snapshot?>(nil)
    private let writes = Mutex(())
    private let logger = Logger(label: "strata.kv")

    /// - Parameters:
    ///   - name: the domain; also the file name.
    ///   - directory: where the domain file lives (default `$XDG_CACHE_HOME/strata`;
    ///     created 0700 if missing).
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
        self.defaultTTL = defaultTTL
        self.clock = clock
    }

    static func storageKey(_ key: Key) -> String { Data(key.cacheKeyBytes).base64EncodedString() }

    /// The domain, from the soft copy if the file is still the version it was
    /// read from, else from the file; a failed read is not cached.
    private func domain() throws -> [String: Entry] {
        let identity = FileIO.identity(file.path)
        if let copy = soft.withLock({ $0 }), copy.identity == identity { return copy.entries }
        // Opened before reading: if the file changes meanwhile, the next
        // call sees another identity and reads again.
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

    /// Moves the domain file to a fresh `<file>.corrupt-<seconds>[-n]`; returns
    /// that path. The name is reserved first (created exclusively), so the
    /// rename never replaces another aside file.
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

    /// Applies `change` to the latest file under the locks and writes it; the
    /// soft copy is updated only if the write succeeded. If it cannot be
    /// written (a full disk) and `fallback` is given, `fallback` is applied
    /// instead, under the same locks (so no other writer's change in between
    /// is undone), and the first error is thrown all the same.
    ///
    /// A directory deleted under the level (a user cleaning `~/.cache`, a tmp
    /// reaper) is recreated first, so writes work again (its entries went with it).
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
            // Only if it is still expired in the latest file: another writer
            // may have stored a fresh value since this read.
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
        try await store(value, forKey: key, expiresAt: expiresAt, backfill: false)
    }

    /// A back-fill keeps the lower entry's deadline, capped at this level's TTL.
    public func backfill(_ fill: Backfill<Value>, forKey key: Key) async throws {
        try await store(fill.value, forKey: key, expiresAt: fill.expiresAt, backfill: true)
    }

    private func store(_ value: Value, forKey key: Key, expiresAt: CacheInstant?, backfill: Bool) async throws {
        let encoded: Data
        do { encoded = try codec.encoded(value) } catch {
            try? await remove(key)  // a failed set leaves no older value to serve
            throw error
        }
        let deadline = StoredDeadline.resolve(given: expiresAt, backfill: backfill) { defaultTTL.map { clock.now().advanced(by: $0) } }
        // A deadline at or before 1970 is already past (never "no expiry").
        // A failed write (a full disk) drops the value it replaces, with a
        // file without it (smaller, so it may still fit), under the same
        // locks: a failed set leaves no older value to serve, and no other
        // writer's set made meanwhile is undone.
        // A back-fill replaces no live value: another writer stored it after
        // the read missed, so it is newer (``Backfill``).
        let storageKey = Self.storageKey(key)
        var declined = false
        try mutate({ entries in
            if backfill, let held = entries[storageKey], !held.isExpired(at: clock.now().nanosecondsSince1970) {
                declined = true
                return
            }
            entries[storageKey] = Entry(value: encoded, expiresAt: deadline.map { max($0.nanosecondsSince1970, 1) })
        }, orElse: { $0[storageKey] = nil })
        if declined { throw BackfillDeclined() }
    }

    public func remove(_ key: Key) async throws {
        let storageKey = Self.storageKey(key)
        guard try domain()[storageKey] != nil else { return }
        try mutate { $0[storageKey] = nil }
    }

    /// Empties the domain. When the file cannot be read, it is left as it is
    /// (and the failure logged).
    public func clear() async {
        do { try mutate { $0.removeAll() } } catch {
            logger.warning("clearing the domain failed", metadata: ["file": "\(file.path)", "error": "\(error)"])
        }
    }

    /// Empties the domain, without suspending (see ``CacheLevel/lostCoherence()``).
    public func lostCoherence() {
        do { try mutate { $0.removeAll() } } catch {
            logger.warning("emptying the domain failed", metadata: ["file": "\(file.path)", "error": "\(error)"])
        }
    }

    /// Drops the in-memory copy; the file stays.
    public func onMemoryWarning() async { soft.withLock { $0 = nil } }

    /// Whether the soft copy is loaded (for tests and tools).
    package var isLoaded: Bool { soft.withLock { $0 != nil } }

    /// Entries in the domain; 0 when the file cannot be read.
    public var count: Int { (try? domain().count) ?? 0 }

    @discardableResult
    public func removeExpired() async -> Int {
        let now = clock.now().nanosecondsSince1970
        var removed = 0
        try? mutate { domain in
            for (key, entry) in domain where entry.isExpired(at: now) {
                domain[key] = nil
                removed += 1
            }
        }
        return removed
    }
}

extension KeyValueStoreLevel where Value == Data {
    public convenience init(name: String, directory: URL? = nil, defaultTTL: Duration? = nil,
                            clock: any CacheClock = SystemClock()) throws {
        try self.init(name: name, directory: directory, codec: .data, defaultTTL: defaultTTL, clock: clock)
    }
}

extension KeyValueStoreLevel where Value == String {
    public convenience init(name: String, directory: URL? = nil, defaultTTL: Duration? = nil,
                            clock: any CacheClock = SystemClock()) throws {
        try self.init(name: name, directory: directory, codec: .string, defaultTTL: defaultTTL, clock: clock)
    }
}

extension KeyValueStoreLevel where Value: Codable {
    public convenience init(name: String, directory: URL? = nil, defaultTTL: Duration? = nil,
                            clock: any CacheClock = SystemClock()) throws {
        try self.init(name: name, directory: directory, codec: .json(), defaultTTL: defaultTTL, clock: clock)
    }
}
