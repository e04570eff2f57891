import Foundation
import Strata
import StrataRedis

/// A pipeline as described by a file: levels top to bottom.
public struct PipelineSpec: Equatable, Sendable {
    public var name: String
    public var levels: [LevelSpec]
    /// The whole pipeline answers its last known values when its levels
    /// fail or are late (`fail-safe:` in a file; ``ResilientCache``).
    public var failSafe: FailSafeSpec?
    /// Gets load through the last level (an origin) and a hit past this
    /// fraction of the origin's `ttl` refreshes the key in the background
    /// (`refresh-ahead:` in a file; ``ResilientCache``'s refresh ahead).
    public var refreshAhead: Double?
    /// The file the spec was read from, so that errors building it can name
    /// the file as well as the level's line (nil for a spec made in code).
    public var file: String?

    public init(name: String, levels: [LevelSpec], failSafe: FailSafeSpec? = nil, refreshAhead: Double? = nil,
                file: String? = nil) {
        self.name = name
        self.levels = levels
        self.failSafe = failSafe
        self.refreshAhead = refreshAhead
        self.file = file
    }

    /// How long a loaded value is kept under `refresh-ahead:` (the origin's `ttl`).
    public var loadTTL: Duration? { refreshAhead == nil ? nil : levels.last?.ttl }
}

/// `fail-safe:` in a pipeline file: ``CacheLevel/failSafe(maxStale:softTimeout:hardTimeout:capacity:)``.
public struct FailSafeSpec: Equatable, Sendable {
    public var maxStale: Duration
    public var softTimeout: Duration?
    public var hardTimeout: Duration?

    public init(maxStale: Duration, softTimeout: Duration? = nil, hardTimeout: Duration? = nil) {
        self.maxStale = maxStale
        self.softTimeout = softTimeout
        self.hardTimeout = hardTimeout
    }
}

/// One level and the wrappers around it.
public struct LevelSpec: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        /// In memory (adaptive W-TinyLFU unless the file asks for `lru`).
        case memory(capacity: Int, countLimit: Int?)
        /// Files in `path` (a fresh temporary directory when `nil`).
        case disk(path: String?, capacity: Int)
        /// A simulated origin: every key exists after `latency` ± `jitter`,
        /// except a `failureRate` share of requests, which fail.
        case origin(latency: Duration, jitter: Duration, failureRate: Double, valueSize: Int)
        /// An HTTP origin: `baseURL` + key.
        case http(baseURL: String, timeout: Duration)
        /// A shared Redis level (with leases on a miss: see `RedisCacheLevel`).
        case redis(url: String, prefix: String, leases: Bool = false)

        public var label: String {
            switch self {
            case .memory: "memory"
            case .disk: "disk"
            case .origin: "origin"
            case .http: "http"
            case .redis: "redis"
            }
        }

        /// An origin (simulated or http): it stores nothing and answers every key it can.
        public var isOrigin: Bool {
            switch self {
            case .origin, .http: true
            case .memory, .disk, .redis: false
            }
        }

        /// The eviction policy a level of this kind gets when the file names
        /// none (the library's defaults); nil for kinds without one.
        public var defaultPolicy: EvictionPolicy? {
            switch self {
            case .memory, .disk: .adaptive
            case .origin, .http, .redis: nil
            }
        }
    }

    public var name: String
    public var kind: Kind
    public var ttl: Duration?
    /// A memory level's sliding expiry: an entry unread this long expires.
    public var sliding: Duration?
    public var pooled = false
    public var capRequests: Int?
    /// The name of the toggle that switches this level on and off.
    public var condition: String?
    /// A memory or disk level's eviction policy (`nil`: the library's default).
    public var policy: EvictionPolicy?
    /// The line the level starts on in its file (for messages).
    public var line: Int?

    public init(name: String, kind: Kind, ttl: Duration? = nil, pooled: Bool = false,
                capRequests: Int? = nil, condition: String? = nil, policy: EvictionPolicy? = nil, line: Int? = nil) {
        self.policy = policy
        self.name = name
        self.kind = kind
        self.ttl = ttl
        self.pooled = pooled
        self.capRequests = capRequests
        self.condition = condition
        self.line = line
    }

    /// `disk · pooled · ttl 5m · cond:disk-on`
    public var summary: String {
        var parts = [kind.label]
        if let policy = policy ?? kind.defaultPolicy { parts.append(policy.rawValue) }
        if case .redis(_, _, true) = kind { parts.append("leases") }
        if pooled { parts.append("pooled") }
        if let capRequests { parts.append("cap \(capRequests)") }
        if let ttl { parts.append("ttl \(Units.format(ttl))") }
        if let sliding { parts.append("sliding \(Units.format(sliding))") }
        if let condition { parts.append("cond:\(condition)") }
        return parts.joined(separator: " · ")
    }

    /// What the pane's title adds to ``summary``: the settings its figures do
    /// not show (capacity and count limit are in its entries and bytes).
    public var paneConfiguration: String {
        guard case .origin(let latency, let jitter, let failureRate, _) = kind else { return "" }
        var text = Units.format(latency)
        if jitter > .zero { text += " ±" + Units.format(jitter) }
        if failureRate > 0 { text += String(format: " · fails %g%%", failureRate * 100) }
        return text
    }

    /// The options of the level itself, for `strata check`.
    public var details: String {
        switch kind {
        case .memory(let capacity, let count):
            "capacity \(Units.formatBytes(capacity))" + (count.map { ", at most \($0) entries" } ?? "")
        case .disk(let path, let capacity):
            "\(path ?? "(temporary directory)"), capacity \(Units.formatBytes(capacity))"
        case .origin(let latency, let jitter, let failureRate, let valueSize):
            "simulated, latency \(Units.format(latency)) ± \(Units.format(jitter)), "
                + String(format: "failure rate %.1f%%", failureRate * 100) + ", values \(Units.formatBytes(valueSize))"
        case .http(let baseURL, let timeout):
            "\(baseURL), timeout \(Units.format(timeout))"
        case .redis(let url, let prefix, let leases):
            "\(RedisConfiguration.redacted(url)), prefix \"\(prefix)\"" + (leases ? ", leases" : "")  // the tree is printed: no password
        }
    }
}

extension PipelineSpec {
    /// The pipeline `strata` opens with no arguments: it needs no files or servers.
    public static var demo: PipelineSpec {
        PipelineSpec(name: "demo", levels: [
            LevelSpec(name: "L1", kind: .memory(capacity: 32 * 1024, countLimit: 64), condition: "memory"),
            LevelSpec(name: "L2", kind: .disk(path: nil, capacity: 512 * 1024), ttl: .seconds(300), condition: "disk"),
            LevelSpec(name: "origin", kind: .origin(latency: .milliseconds(40), jitter: .milliseconds(15),
                                                    failureRate: 0.02, valueSize: 512),
                      pooled: true, capRequests: 32),
        ])
    }

    /// The pipeline as a tree, for `strata check`.
    public var tree: String {
        var lines = ["pipeline \(name) (\(levels.count) level\(levels.count == 1 ? "" : "s"), top to bottom)"]
        for (index, level) in levels.enumerated() {
            let last = index == levels.count - 1
            lines.append("\(last ? "└─" : "├─") \(level.name): \(level.kind.label), \(level.details)")
            var wrappers: [String] = []
            if let ttl = level.ttl {
                wrappers.append(level.kind.isOrigin ? "what it loads is kept \(Units.format(ttl))" : "expires after \(Units.format(ttl))")
            }
            if let condition = level.condition { wrappers.append("conditioned by toggle \"\(condition)\"") }
            if let cap = level.capRequests { wrappers.append("at most \(cap) requests in flight") }
            if level.pooled { wrappers.append("pooled (single-flight gets)") }
            wrappers.append("instrumented as \"\(level.name)\"")
            for (w, wrapper) in wrappers.enumerated() {
                lines.append("\(last ? "  " : "│ ")   \(w == wrappers.count - 1 ? "└" : "├") \(wrapper)")
            }
        }
        if let failSafe {
            var line = "fail-safe: the last value seen, up to \(Units.format(failSafe.maxStale)) old, when the levels fail"
            if let soft = failSafe.softTimeout { line += "; after \(Units.format(soft)) (soft timeout)" }
            if let hard = failSafe.hardTimeout { line += "; a timeout after \(Units.format(hard))" }
            lines.append(line)
        }
        if let refreshAhead, let ttl = loadTTL, let origin = levels.last {
            lines.append("refresh ahead: gets load through \(origin.name), whose values are kept \(Units.format(ttl)); "
                         + "a hit after \(Units.format(ttl * refreshAhead)) refreshes the key in the background")
        }
        return lines.joined(separator: "\n")
    }
}
