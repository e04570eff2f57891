import Foundation
import Logging
import Synchronization

/// A persistent level: one file per entry in a directory of its own.
///
/// - **Format:** each file holds a 56-byte header (key and value lengths,
///   expiry, last access, creation time, checksum), the key, then the value
///   encoded by a ``CacheCodec``. File names are a stable 128-bit hash of the
///   key (and the codec's name, so differently-typed caches never share a
///   file); the stored key detects hash collisions. Keys may be any bytes:
///   `/`, `..`, binary and very long keys are only ever hashed.
/// - **Writes** go to a temporary file renamed over the entry, so a reader (or
///   a crash) never sees half an entry. A failed write (disk full) throws and
///   deletes the entry it would have replaced (no older value stays
///   readable), unless that cannot be deleted either. What a failed set or
///   remove reports to the levels above is decided by what is on disk after
///   it (see ``set(_:forKey:expiresAt:)`` and ``remove(_:)``).
/// - **Privacy:** files are created 0600 and directories 0700.
/// - **Capacity** counts file bytes (header + key + value). Under
///   ``EvictionPolicy/adaptive`` (the default) the memory level's W-TinyLFU
///   decides (a new entry may be declined: its set succeeds, the file is
///   deleted, ``admissionsRejected`` counts it); under ``EvictionPolicy/lru``
///   eviction removes the least recently used entries by our own recorded
///   access time (not atime/mtime, which Linux does not keep reliably).
///   At start the most recently used entries that fit are kept under either
///   policy (restored entries count as unread for admission), and a
///   ``trim(toSize:)`` takes the least wanted without admission duels. Size
///   accounting is signed and rebuilt from the directory at start, so files
///   deleted behind its back only make a later read a miss.
/// - **Deletes are checked:** an expired, corrupt or evicted entry is deleted
///   only if the file still holds the version that was judged (creation time,
///   checksum and size), so a newer entry that another writer renamed into
///   place meanwhile is never lost.
/// - **A deleted directory** (a user cleaning `~/.cache`, a tmp reaper) is
///   recreated by the next operation that finds it gone, the index is emptied,
///   and ``directoryRecreations`` counts it.
/// - **Corrupt, truncated or foreign files** read as a miss, are deleted and
///   counted (``corruptEntriesRemoved``). A value that fails to *decode* is a
///   miss and counted (``decodeFailures``) but left for whoever wrote it.
/// - **Processes:** several may share a directory: entries are replaced
///   atomically, temporary files carry the writer's pid (only a dead writer's
///   leftovers are cleaned), and start-up and `clear()` hold an advisory
///   `flock` on `.lock`. An entry another process wrote is found on first read.
///   Once a level above listens (any composition over this level does), the
///   directory is watched (inotify) and an entry another writer replaces or
///   deletes is dropped from the levels above (``invalidationsReported``).
/// - **Threads:** reads and writes of entries up to 64 KiB run on the caller
///   (page-cache IO of that size takes microseconds); larger ones run on a
///   dedicated Dispatch queue so they do not hold a cooperative thread.
/// - **Shutting down:** ``shutdown()`` retires the level for good before its
///   directory is deleted: from then on it never touches the directory (see
///   there for what each operation does instead).
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

        /// Forgets every entry; the counters (and what the policy learnt) stay.
        mutating func reset() {
            index.removeAll()
            dirtyAccess = [:]
        }
    }

    /// Entries up to this many bytes are read and written on the caller's thread.
    package static var inlineIOLimit: Int { 64 * 1024 }

    public let directory: URL
    public let capacity: Int
    public let name: String
    public let clock: any CacheClock
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
    /// Entries written before this instant (ns since 1970, see
    /// ``EntryFingerprint/nextCreationTime()``) are misses: a stack that kept
    /// this level coherent with a level below it went then (``lostCoherence()``,
    /// here or in another level on the directory: the mark is kept in it).
    let coherentSince = Atomic<Int64>(0)
    /// Lets operations in until ``shutdown()``.
    let gate = DiskLevelGate()
    /// Held while ``shutdown()`` writes out the last access times.
    let finalFlush = Mutex(())
    let logger: Logger

    /// A disk level in `directory` (created if missing, mode 0700) holding at
    /// most `capacity` bytes of files. Throws ``DiskCacheError/directoryNotWritable(path:errno:)``
    /// when the directory cannot be created or written; anything else found in
    /// it (garbage files, stale temporary files, corrupt entries) is cleaned up.
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

    // MARK: Facts

    /// Entries this level knows about.
    public var count: Int { state.withLock { $0.index.count } }
    /// Bytes of the files this level knows about (headers included).
    public var totalSize: Int { state.withLock { $0.index.totalSize } }
    /// Changes by other writers reported to the levels above.
    public var invalidationsReported: Int { changes.invalidationsReported }
    /// This level's own writes (sets, removes, clears) reported to the
    /// listeners in this process so far (tests count them: a report is
    /// delivered later, in a task of its own).
    package var ownWritesReported: Int { changes.ownWritesReported }
    /// Corrupt, truncated or foreign files deleted so far.
    public var corruptEntriesRemoved: Int { state.withLock { $0.counters.corruptRemoved } }
    /// Entries that did not decode with this level's codec (left in place).
    public var decodeFailures: Int { state.withLock { $0.counters.decodeFailures } }
    /// Entries evicted for capacity so far (under `.adaptive`, including new
    /// entries that admission declined).
    public var evictions: Int { state.withLock { $0.counters.evictions } }
    /// New entries that ``EvictionPolicy/adaptive`` declined (or let go
    /// before their first read); 0 under `.lru`.
    public var admissionsRejected: Int { state.withLock { $0.index.admissionsRejected } }
    /// The admission window's current share of the capacity (0...1), or nil
    /// under ``EvictionPolicy/lru``.
    public var windowShare: Double? { state.withLock { $0.index.windowShare } }
    /// Times the directory was found deleted and created again.
    public var directoryRecreations: Int { state.withLock { $0.counters.directoryRecreations } }
    /// Whether ``shutdown()`` has been called.
    public var isShutDown: Bool { gate.isShut }

    /// Called with an entry file's path just before the level checks and
    /// deletes it (tests use it to force a concurrent replacement).
    package var beforeDeletingFile: (@Sendable (String) -> Void)? {
        get { deletionHook.withLock { $0 } }
        set { deletionHook.withLock { $0 = newValue } }
    }

    /// Called at each step of a checked delete of an entry file (tests act
    /// there as another process would).
    package var duringCheckedDelete: (@Sendable (String, CheckedDeleteStep) -> Void)? {
        get { checkedDeleteHook.withLock { $0 } }
        set { checkedDeleteHook.withLock { $0 = newValue } }
    }

    deinit { flushAccessTimes() }
}
