import Foundation
import Strata
import StrataRedis

/// A level of a running pipeline, with what the explorer shows about it.
public struct LiveLevel: Sendable {
    /// The level's settings now: its spec from the file, with the edits
    /// made live since (``ExplorerModel`` `set-capacity`, `set-ttl`, `set-policy`).
    public var spec: LevelSpec { settings.spec }
    let settings: LevelSettings
    public let statistics: LevelStatistics
    public let toggle: Toggle?
    /// The level as the pipeline uses it (wrapped and instrumented).
    public let cache: BasicCache<String, Data>
    public let entries: @Sendable () -> Int?
    public let bytes: @Sendable () -> Int?
    /// A memory or disk level's byte capacity now.
    public var capacityBytes: Int? {
        switch spec.kind {
        case .memory(let capacity, _), .disk(_, let capacity): capacity
        case .origin, .http, .redis: nil
        }
    }
    /// A memory level's count limit now.
    public var countLimit: Int? {
        if case .memory(_, let countLimit) = spec.kind { return countLimit }
        return nil
    }
    /// A memory level's level, which live edits resize or replace (nil for other kinds).
    var memory: SwappableMemoryLevel? = nil
    /// Live settings the title shows beside the spec's (an adaptive memory
    /// level's window share and declined sets).
    public var liveConfiguration: (@Sendable () -> String)? = nil
    /// Removes the entries past their TTL and says how many (levels with a
    /// TTL that hold entries: expired entries are not counted as held).
    public var removeExpired: (@Sendable () async -> Int)? = nil
    /// Whether the level holds a key now, asked without counting a get
    /// (memory levels: what `:set` reports as declined).
    public var holds: (@Sendable (String) -> Bool)? = nil
}

/// A level of a spec that could not be built. It names the file and the
/// level's line when the spec came from a file, like a ``PipelineFileError``,
/// since a level can parse and still fail here (a disk directory that cannot
/// be made, a Redis URL the client refuses) and the user must find it.
public struct PipelineBuildError: Error, CustomStringConvertible {
    /// The pipeline file (nil for a spec made in code).
    public internal(set) var file: String?
    /// The line the level starts on in ``file``.
    public internal(set) var line: Int?
    /// The level's name.
    public let level: String
    public let message: String

    public init(file: String? = nil, line: Int? = nil, level: String, message: String) {
        self.file = file
        self.line = line
        self.level = level
        self.message = message
    }

    /// `pipeline.yaml:12: level L2: …`, or `level L2: …` without a file.
    public var description: String {
        let location = file.map { file in "\(file)\(line.map { ":\($0)" } ?? ""): " } ?? ""
        return "\(location)level \(level): \(message)"
    }
}

/// A key that does not make a URL under an http level's base URL.
public struct HTTPKeyError: Error, CustomStringConvertible {
    public let key: String
    public var description: String { "key \"\(key)\" does not make a valid URL" }
}

/// A pipeline built from a ``PipelineSpec``: every level instrumented under its
/// name, conditioned by its toggle, composed top to bottom.
public final class Pipeline: Sendable {
    public let spec: PipelineSpec
    public let levels: [LiveLevel]
    public let cache: BasicCache<String, Data>
    /// The levels under `fail-safe:`, when the spec has it and no
    /// `refresh-ahead:` (``cache`` is it, erased).
    public let resilient: ResilientCache<BasicCache<String, Data>>?
    /// The levels above the origin under `refresh-ahead:` (and `fail-safe:`,
    /// if given), loading through the origin (``cache`` wraps it: ``LoadingStack``).
    let loading: ResilientCache<UpperStack>?
    /// Toggles in order of first use (keys 1–9 flip them).
    public let toggles: [Toggle]
    /// Built with `--readonly`: shared levels (Redis, a disk level's own
    /// directory) are only read (see ``ReadOnlyLevel``), and commands that
    /// change a level are refused (``Command/readOnlyRefusal``).
    public let isReadOnly: Bool
    /// The directories of the disk levels given no path (deleted by ``shutdown()``).
    let temporaryDirectories: [URL]
    /// Every disk level, retired by ``shutdown()`` before the directories go.
    let diskLevels: [DiskCacheLevel<String, Data>]

    public init(_ spec: PipelineSpec, readOnly: Bool = false) throws {
        self.spec = spec
        self.isReadOnly = readOnly
        if spec.refreshAhead != nil { try PipelineFile.checkLoader(spec.levels, line: nil, file: spec.file ?? spec.name) }
        var toggles: [Toggle] = []
        var levels: [LiveLevel] = []
        var disks: [DiskCacheLevel<String, Data>] = []
        var temporary: [URL] = []
        for level in spec.levels {
            let toggle = level.condition.map { name in
                toggles.first { $0.name == name } ?? { let t = Toggle(name: name); toggles.append(t); return t }()
            }
            do {
                levels.append(try Self.build(level, toggle: toggle, disks: &disks, temporary: &temporary, readOnly: readOnly))
            } catch {
                // The levels built so far go: nothing has used them (no
                // composition, no operation in flight), so none of them
                // touches its directory again, and theirs are deleted.
                levels = []
                disks = []
                Self.removeDirectories(temporary)
                guard var error = error as? PipelineBuildError else { throw error }
                error.file = spec.file
                error.line = level.line
                throw error
            }
        }
        self.levels = levels
        self.toggles = toggles
        self.temporaryDirectories = temporary
        self.diskLevels = disks
        if let fraction = spec.refreshAhead, let ttl = spec.loadTTL {
            let options = ResilienceOptions(maxStale: spec.failSafe?.maxStale, softTimeout: spec.failSafe?.softTimeout,
                                            hardTimeout: spec.failSafe?.hardTimeout, refreshAhead: fraction)
            let loading = ResilientCache(LoadingStack.upperStack(levels.dropLast().map(\.cache)), options: options)
            self.loading = loading
            self.resilient = nil
            self.cache = LoadingStack(inner: loading, origin: levels[levels.count - 1].cache, ttl: ttl).normalize()
            return
        }
        var composed = levels[0].cache
        for level in levels.dropFirst() { composed = (composed + level.cache).normalize() }
        loading = nil
        resilient = spec.failSafe.map {
            composed.failSafe(maxStale: $0.maxStale, softTimeout: $0.softTimeout, hardTimeout: $0.hardTimeout)
        }
        self.cache = resilient?.normalize() ?? composed
    }

    /// The fail-safe and refresh-ahead settings in force, if any.
    public var resilienceOptions: ResilienceOptions? { loading?.options ?? resilient?.options }

    /// What the fail-safe and refresh ahead did so far (nil without either).
    public var resilienceStatistics: ResilienceStatistics? { loading?.resilienceStatistics ?? resilient?.resilienceStatistics }

    /// Finds what building `spec` would refuse, creating nothing: a disk
    /// level's directory is checked, not made (`strata check`). The other
    /// levels are built and dropped (none of them touches the filesystem or
    /// connects before it is used). Throws the ``PipelineBuildError`` that
    /// ``init(_:)`` would, with the file and the level's line.
    public static func validate(_ spec: PipelineSpec) throws {
        if spec.refreshAhead != nil { try PipelineFile.checkLoader(spec.levels, line: nil, file: spec.file ?? spec.name) }
        for level in spec.levels {
            do {
                if case .disk(let path, _) = level.kind {
                    try checkLimits(level)
                    guard let path else { continue }  // a fresh temporary directory
                    do {
                        try DiskCacheLevel<String, Data>.checkDirectory(URL(fileURLWithPath: (path as NSString).expandingTildeInPath))
                    } catch {
                        throw PipelineBuildError(level: level.name, message: "\(error)")
                    }
                } else {
                    var disks: [DiskCacheLevel<String, Data>] = [], temporary: [URL] = []
                    _ = try build(level, toggle: nil, disks: &disks, temporary: &temporary)
                }
            } catch var error as PipelineBuildError {
                error.file = spec.file
                error.line = level.line
                throw error
            }
        }
    }

    /// Shuts the disk levels down (``DiskCacheLevel/shutdown()``: they wait
    /// for their operations in progress and write nothing more), then
    /// deletes the temporary directories this pipeline created. Call it on
    /// every way out; the pipeline's disk levels miss and refuse writes after it.
    public func shutdown() async {
        for disk in diskLevels { await disk.shutdown() }
        Self.removeDirectories(temporaryDirectories)
    }

    static func removeDirectories(_ directories: [URL]) {
        for url in directories { try? FileManager.default.removeItem(at: url) }
    }

    public func toggle(named name: String) -> Toggle? { toggles.first { $0.name == name } }

    public func level(named name: String) -> LiveLevel? { levels.first { $0.spec.name == name } }

    /// The live line of a level under the adaptive policy: its window share and declined sets.
    static func policySummary(window: Double?, declined: Int) -> String {
        (window.map { String(format: "window %.0f%%", $0 * 100) } ?? "") + " · declined \(declined)"
    }

    /// A spec from a file is checked as it is read; one made in code is
    /// checked here, since the levels trap on a negative capacity and their
    /// cost sums could overflow near Int.max.
    static func checkLimits(_ spec: LevelSpec) throws {
        switch spec.kind {
        case .memory(let capacity, _), .disk(_, let capacity):
            guard (0...Units.maxBytes).contains(capacity) else {
                throw PipelineBuildError(level: spec.name, message:
                    "capacity \(capacity) is outside 0 to \(Units.exactBytes(Units.maxBytes))")
            }
        case .origin(_, _, _, let valueSize):
            guard (0...SimulatedOrigin.maxValueSize).contains(valueSize) else {
                throw PipelineBuildError(level: spec.name, message:
                    "value size \(valueSize) is outside 0 to \(Units.exactBytes(SimulatedOrigin.maxValueSize))")
            }
        case .http, .redis:
            break
        }
        if case .memory(_, let countLimit?) = spec.kind, countLimit < 0 {
            throw PipelineBuildError(level: spec.name, message: "count limit \(countLimit) is negative")
        }
    }

    /// The pipeline as it runs now: the file's, with the live edits (what `:save` writes).
    public var currentSpec: PipelineSpec {
        var current = spec
        current.levels = levels.map(\.spec)
        return current
    }

    /// The memory level `spec` describes (also what a live edit rebuilds).
    static func memoryLevel(_ spec: LevelSpec) -> MemoryCacheLevel<String, Data> {
        guard case .memory(let capacity, let countLimit) = spec.kind else { preconditionFailure("not a memory level") }
        return MemoryCacheLevel<String, Data>(name: spec.name, capacity: capacity, countLimit: countLimit,
                                              policy: spec.policy ?? spec.kind.defaultPolicy ?? .adaptive, defaultTTL: spec.ttl,
                                              slidingExpiry: spec.sliding)
    }

    static func build(_ spec: LevelSpec, toggle: Toggle?, disks: inout [DiskCacheLevel<String, Data>],
                      temporary: inout [URL], readOnly: Bool = false) throws -> LiveLevel {
        try checkLimits(spec)
        switch spec.kind {
        case .memory:
            let memory = SwappableMemoryLevel(memoryLevel(spec), hasDeadlines: spec.ttl != nil || spec.sliding != nil)
            var live = finish(spec, memory, toggle: toggle, entries: { memory.current.count }, bytes: { memory.current.totalCost })
            live.memory = memory
            // Swept while the level has (or had: entries keep their deadlines) a TTL.
            live.removeExpired = { memory.mayHoldDeadlines ? await memory.current.removeExpired() : 0 }
            live.holds = { memory.current.contains($0) }
            live.liveConfiguration = {
                let level = memory.current
                return level.policy == .adaptive ? policySummary(window: level.windowShare, declined: memory.levelCounters["admissionsRejected"] ?? 0) : ""
            }
            return live
        case .disk(let path, let capacity):
            let directory: URL
            if let path {
                directory = URL(fileURLWithPath: (path as NSString).expandingTildeInPath)
            } else {
                directory = URL(fileURLWithPath: NSTemporaryDirectory())
                    .appendingPathComponent("strata-\(spec.name)-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max))")
                temporary.append(directory)
            }
            let disk: DiskCacheLevel<String, Data>
            do {
                disk = try DiskCacheLevel<String, Data>(name: spec.name, directory: directory, capacity: capacity,
                                                         defaultTTL: spec.ttl, policy: spec.policy ?? spec.kind.defaultPolicy ?? .adaptive)
            } catch {
                throw PipelineBuildError(level: spec.name, message: "\(error)")
            }
            disks.append(disk)
            // Read-only, a directory of its own may be another process's: only read.
            let shared = readOnly && path != nil
            let level = shared ? ReadOnlyLevel(disk).normalize() : path == nil ? PrivateDirectoryLevel(disk).normalize() : disk.normalize()
            var live = finish(spec, level, toggle: toggle, entries: { disk.count }, bytes: { disk.totalSize })
            if spec.ttl != nil && !shared { live.removeExpired = { await disk.removeExpired() } }
            let adaptive = disk.policy == .adaptive
            live.liveConfiguration = {
                [adaptive ? policySummary(window: disk.windowShare, declined: disk.admissionsRejected) : "",
                 disk.isUnwatched ? "not watched" : ""].filter { !$0.isEmpty }.joined(separator: " · ")
            }
            return live
        case .origin(let latency, let jitter, let failureRate, let valueSize):
            let origin = SimulatedOrigin(latency: latency, jitter: jitter, failureRate: failureRate, valueSize: valueSize)
            return finish(spec, origin, toggle: toggle, entries: { nil }, bytes: { nil })
        case .http(let base, let timeout):
            let fetcher = NetworkFetcher(name: spec.name, timeout: timeout).mapKeys { (key: String) -> URL in
                let path = key.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? key
                guard let url = URL(string: base + path) else { throw HTTPKeyError(key: key) }
                return url
            }
            return finish(spec, fetcher, toggle: toggle, entries: { nil }, bytes: { nil })
        case .redis(let url, let prefix, let leases):
            let redis: RedisCacheLevel<String, Data>
            do {
                // Read-only, no lease is taken on a miss (a lease is a write).
                redis = try RedisCacheLevel<String, Data>(url: url, prefix: prefix, defaultTTL: spec.ttl,
                                                          commandTimeout: .seconds(1), leases: leases && !readOnly)
            } catch {
                throw PipelineBuildError(level: spec.name, message: "\(error)")
            }
            var live = finish(spec, readOnly ? ReadOnlyLevel(redis).normalize() : redis.normalize(), toggle: toggle,
                              entries: { nil }, bytes: { nil })
            live.liveConfiguration = {
                "invalidations \(redis.invalidationsReceived) · flushes \(redis.nearCacheFlushes)"
                    + (redis.isReceivingInvalidations ? "" : " · not subscribed")
                    + (redis.client.isCircuitOpen ? " · circuit open: reads fail fast" : "")
            }
            return live
        }
    }

    static func finish<L: CacheLevel>(
        _ spec: LevelSpec, _ base: L, toggle: Toggle?, entries: @escaping @Sendable () -> Int?,
        bytes: @escaping @Sendable () -> Int?
    ) -> LiveLevel where L.Key == String, L.Value == Data {
        var level = base.normalize()
        if let cap = spec.capRequests { level = level.capRequests(cap).normalize() }
        if spec.pooled { level = level.pooled().normalize() }
        let instrumented = level.instrumented(name: spec.name)
        var wrapped = instrumented.normalize()
        if let toggle { wrapped = wrapped.conditioned { _ in toggle.isOn }.normalize() }
        return LiveLevel(settings: LevelSettings(spec), statistics: instrumented.statistics, toggle: toggle, cache: wrapped,
                         entries: entries, bytes: bytes)
    }
}
