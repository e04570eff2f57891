import Foundation
import Logging
import Synchronization

/// A persistent level: one file per entry in a directory of its own.
///
/// - **Format:** a 56-byte header (key and value lengths, expiry, last access,
///   creation time, checksum), the key, the value (``CacheCodec``). Names are a
///   stable 128-bit hash of key and codec name (differently-typed caches never
///   share a file; any key bytes are safe); the stored key detects collisions.
/// - **Writes** rename a temporary file over the entry: no reader or crash sees
///   half an entry. A failed write throws and deletes the entry it would replace,
///   or if it cannot (read-only, `EACCES`) reads it as a miss from then on
///   (reports: ``set(_:forKey:expiresAt:)``, ``remove(_:)``). Files 0600, dirs 0700.
/// - **Capacity** counts file bytes (header + key + value). Under
///   ``EvictionPolicy/adaptive`` (default) W-TinyLFU decides (a declined new
///   entry's set succeeds, its file deleted: ``admissionsRejected``); under
///   ``EvictionPolicy/lru`` our own recorded access time does (Linux keeps
///   atime/mtime unreliably). At start the most recently used entries that fit
///   are kept (as unread for admission); ``trim(toSize:)`` takes the least
///   wanted without admission duels. Size accounting is signed and rebuilt at
///   start, so files deleted behind its back only make later reads miss.
/// - **Deletes are checked:** an expired, corrupt or evicted entry is deleted
///   only if the file still holds the judged version (creation time, checksum,
///   size), so a newer one another writer renamed in is never lost.
/// - **A deleted directory** (`~/.cache` cleaned, a tmp reaper) is recreated by
///   the next operation finding it gone, the index emptied (``directoryRecreations``).
/// - **Corrupt, truncated or foreign files** are deleted misses (``corruptEntriesRemoved``);
///   values that fail to *decode* are misses left in place (``decodeFailures``).
/// - **Processes** may share a directory: atomic replaces, temporary files named
///   by pid (only a dead writer's are cleaned), `flock` on `.lock` for start-up
///   and `clear()`. Once a level above listens, the directory is watched
///   (inotify) and other writers' changes are dropped above (``invalidationsReported``).
/// - **Threads:** entries up to 64 KiB are read and written on the caller
///   (page-cache IO, µs); larger ones on a Dispatch queue, off the cooperative pool.
/// - ``shutdown()`` retires the level for good (before its directory is deleted).
public final class DiskCacheLevel<Key: Sendable, Value: Sendable>: ExpirableCacheLevel {
    struct Counters: Sendable {
        var corruptRemoved = 0
        var decodeFailures = 0
        var evictions = 0
        var directoryRecreations = 0
    }

    /// Everything behind the level's lock.
    struct State: Sendable {
        var index: DiskIndex
        /// Access times read since the last flush, for the headers.
        var dirtyAccess: [EntryID: Int64] = [:]
        var counters = Counters()
        /// Per key, the instant before which its entries read as misses here:
        /// a write could not reach them (``voidEntries(of:before:)``).
        var voided: [EntryID: Int64] = [:]

        /// Forgets every entry; the counters, what the policy learnt and the voided keys stay.
        mutating func reset() {
            index.removeAll()
            dirtyAccess = [:]
        }
    }

    /// Entries up to this many bytes are read and written on the caller's thread.
    package static var inlineIOLimit: Int { 64 * 1024 }

    /// The directory holding the entries' files and the index.
    public let directory: URL
    /// The most bytes the entries may take; past it, the policy evicts.
    public let capacity: Int
    public let name: String
    public let clock: any CacheClock
    /// How values become the bytes of the entries' files.
    public let codec: CacheCodec<Value>
    /// How entries are chosen for eviction.
    public let policy: EvictionPolicy
    let defaultTTL: Duration?
    let keyBytes: @Sendable (Key) -> [UInt8]
    let path: String
    let state: Mutex<State>
    /// Keeps this process's writers and deleters of one entry file apart.
    let entryLocks = EntryLocks()
    let directoryRecovery = Mutex(())
    let deletionHook = Mutex<(@Sendable (String) -> Void)?>(nil)
    let checkedDeleteHook = Mutex<(@Sendable (String, CheckedDeleteStep) -> Void)?>(nil)
    let changes = DiskChangeFeed<Key>()
    /// Entries created before this (ns since 1970, ``EntryFingerprint/nextCreationTime()``)
    /// are misses: a stack keeping this level coherent with one below went then
    /// (``lostCoherence()``, here or by another level: the directory keeps the mark),
    /// or a clear could not delete them. A key's own mark may be later (`State.voided`).
    let coherentSince = Atomic<Int64>(0)
    /// Lets operations in until ``shutdown()``.
    let gate = DiskLevelGate()
    /// Held while ``shutdown()`` writes out the last access times.
    let finalFlush = Mutex(())
    let logger: Logger

    /// A disk level in `directory` (created 0700 if missing), at most `capacity`
    /// bytes of files. Throws ``DiskCacheError/directoryNotWritable(path:errno:)``
    /// if it is missing and cannot be created, or cannot be read;
    /// ``ExpiryError/invalidTTL(_:)`` for a negative `defaultTTL`. Garbage, stale
    /// temporary files and corrupt entries are cleaned. A directory it may read
    /// but not write (a warm cache shipped in a read-only image, `EACCES`)
    /// opens with one warning naming it: its entries are served, and sets and
    /// removes throw ``DiskCacheError/writeFailed(path:errno:)``.
    public init(
        name: String = "disk",
        directory: URL? = nil,
        capacity: Int,
        codec: CacheCodec<Value>,
        defaultTTL: Duration? = nil,
        policy: EvictionPolicy = .adaptive,
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
        self.policy = policy
        self.state = Mutex(State(index: DiskIndex(policy: policy, capacity: capacity)))
        self.defaultTTL = try ExpiryError.checked(defaultTTL, role: "defaultTTL")
        let codecName = codec.name
        // The codec's name is hashed in: see **Format** above.
        self.keyBytes = { key in Array(codecName.utf8) + [0] + keyBytes(key) }
        self.logger = Logger(label: "strata.disk")
        if let code = FileIO.makeDirectory(path) {
            guard FileIO.isReadOnlyDirectory(path, failure: code) else {
                throw DiskCacheError.directoryNotWritable(path: path, errno: code)
            }
            logger.warning("cache directory is read-only: its entries are served, writes to it fail",
                           metadata: ["directory": "\(path)", "error": "\(DiskCacheError.text(code))"])
        }
        // A directory without tombstones has an unknown past (see `DiskTombstones`).
        tombstones.make()
        rebuildIndex()
        coherentSince.store(readCoherenceMark() ?? 0, ordering: .relaxed)
    }

    /// `$XDG_CACHE_HOME/strata/<name>`, else `~/.cache/strata/<name>`.
    public static func defaultDirectory(name: String) -> URL {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSTemporaryDirectory()) + "/.cache")
        let safe = String(name.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" })
        return URL(fileURLWithPath: base).appendingPathComponent("strata").appendingPathComponent(safe)
    }

    func file(_ id: EntryID) -> String { path + "/" + id.fileName }

    /// The removes and clears back-fills must not undo (see ``DiskTombstones``).
    var tombstones: DiskTombstones { DiskTombstones(entries: path) }

    // MARK: Facts

    /// Entries this level knows about.
    public var count: Int { state.withLock { $0.index.count } }
    /// Bytes of the files this level knows about (headers included).
    public var totalSize: Int { state.withLock { $0.index.totalSize } }
    /// Changes by other writers reported to the levels above.
    public var invalidationsReported: Int { changes.invalidationsReported }
    /// Own writes reported to this process's listeners (tests: reports arrive later, in a task).
    package var ownWritesReported: Int { changes.ownWritesReported }
    /// Corrupt, truncated or foreign files deleted so far.
    public var corruptEntriesRemoved: Int { state.withLock { $0.counters.corruptRemoved } }
    /// Entries that did not decode with this level's codec (left in place).
    public var decodeFailures: Int { state.withLock { $0.counters.decodeFailures } }
    /// Entries evicted for capacity (under `.adaptive`, with declined new ones).
    public var evictions: Int { state.withLock { $0.counters.evictions } }
    /// New entries ``EvictionPolicy/adaptive`` declined (or let go before a read); 0 under `.lru`.
    public var admissionsRejected: Int { state.withLock { $0.index.admissionsRejected } }
    /// The admission window's share of the capacity (0...1); nil under ``EvictionPolicy/lru``.
    public var windowShare: Double? { state.withLock { $0.index.windowShare } }
    /// Times the directory was found deleted and created again.
    public var directoryRecreations: Int { state.withLock { $0.counters.directoryRecreations } }
    /// Whether ``shutdown()`` has been called.
    public var isShutDown: Bool { gate.isShut }

    /// Called with an entry file's path before its checked delete (tests race a replace there).
    package var beforeDeletingFile: (@Sendable (String) -> Void)? {
        get { deletionHook.withLock { $0 } }
        set { deletionHook.withLock { $0 = newValue } }
    }

    /// Called at each step of a checked delete (tests act there as another process).
    package var duringCheckedDelete: (@Sendable (String, CheckedDeleteStep) -> Void)? {
        get { checkedDeleteHook.withLock { $0 } }
        set { checkedDeleteHook.withLock { $0 = newValue } }
    }

    deinit { flushAccessTimes() }
}
