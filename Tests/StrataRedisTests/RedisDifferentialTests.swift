import Foundation
import Strata
import StrataRedis
import StrataTestSupport
import Synchronization
import Testing

/// Rule 1 over a shared Redis level, by differential testing: **the answer
/// never changes because of the cache**, and compositions sharing one Redis
/// prefix agree. Each seed starts from a fresh prefix on one real
/// `redis-server` and builds 3–5 compositions over it, each with its own
/// ``RedisCacheLevel`` (its own `RedisClient`, its own tracking connection),
/// in random shapes:
///
/// - `memory + redis`, `memory + redis + origin`, `memory + (redis + origin)`,
///   `memory(ttl) + memory + redis`, `memory + disk + redis [+ origin]`,
///   `redis + origin`, `redis(invalidatesLevelsAbove: false) + origin` (no
///   tracking: only `SET NX` and the tombstones guard its back-fills), and
///   `memory + redis` over the Redis level *object* of another composition
///   (the same-process report path, ``CacheWriteOrigin``);
/// - memory TTLs sometimes; in some seeds every Redis level has a
///   `defaultTTL` (then every level above has one no longer than it, so
///   that a plain set has one lifetime);
/// - the origin, shared by all, is a source of truth with a generation per
///   key (`o-<key>-g<n>`), sometimes `pooled()`, sometimes slow (up to 0.5
///   or 3 ms an answer, which widens the races).
///
/// **Sequential** (``randomOperationsOnSharedRedisAnswerLikeTheModel``): a
/// random sequence of operations, each on a random composition: gets through
/// `getIfPresent`, `entry(forKey:)`, `get` and `batchGetSome`; sets (some with
/// a deadline, 25 – 900 ms away); removes; clears; writes by a client that is
/// not Strata (a plain `RedisClient` connection: `SET`, `SET … PX`, `DEL`,
/// `PEXPIRE` that shortens a key's life, `FLUSHDB`, `CLIENT KILL` of a
/// tracking connection followed at once by a `SET`); the origin's value
/// changing (alone, or followed by a remove through a composition:
/// cache-aside); a raw `DEL`, a get through a composition with an origin whose
/// back-fill is left in flight, then at once a set, or an origin change and a
/// remove, through another composition; and waiting for the next deadline to
/// pass. Half the seeds leave back-fills in flight between operations; half
/// start before the tracking connections have subscribed. The reference
/// model knows what Redis must hold per key (the last write, with bounds on
/// its deadline), and which origin answers may still be cached (those served
/// since the key's last set, remove or clear through Strata, and the current
/// one). After each operation:
///
/// 1. the composition that wrote answers at once (read-your-writes; no poll);
/// 2. every composition answers an admissible value within
///    `STRATA_REDIS_DIFF_WAIT_MS` (1,000 ms): polled with a deadline, since a
///    change reaches the others by Redis' invalidation push;
/// 3. Redis itself (a raw `GET` and `PTTL`) holds what the model says;
/// 4. after the back-fills have settled (`waitForPendingWrites()`), every
///    composition still answers an admissible value (no poll: a late
///    back-fill bringing an old value back fails here).
///
/// Plain gets are judged at once. **No value outlives its TTL**: a read that
/// began after a value's latest possible deadline (+ 2 ms for Redis'
/// millisecond clock) and answered it fails at once, however it was reached;
/// so does an entry whose deadline is later than the value's. The latest
/// possible deadline of a set with deadline `D` that took `t0…t1` is
/// `D + (t1 - t0) + 1 ms` (Redis counts `PX` from when it runs the command).
/// A `PEXPIRE` by another client binds once every composition has dropped
/// its copy with the old deadline (which step 2 waits for).
///
/// **Concurrent** (``concurrentWritersOnSharedRedisLeaveEveryCompositionAgreeingWithRedis``):
/// two tasks per composition hammer three keys with gets and writes (and
/// cache-aside origin changes, and now and then a clear), while a raw client
/// sets, deletes, shortens TTLs (`PEXPIRE … LT`) and kills tracking
/// connections. Every read and completed write is journaled. Then:
///
/// - no read answered a value after its latest deadline, or with an entry
///   deadline later than it;
/// - read-your-writes: once a composition's own set, remove or clear of a key
///   has returned, it never answers a value whose write had returned before
///   that write began, nor an origin answer last served before it began
///   (unless that write's value may have expired, or a raw `DEL`/`PEXPIRE`
///   came between: the `SET NX` gaps the README lists);
/// - once every task is done and the back-fills have settled, every
///   composition agrees with what Redis holds (value, and a deadline no later
///   than Redis'), within the wait, and still does after the back-fills its
///   own checks caused; and Redis holds no origin answer older than the last
///   cache-aside remove.
///
/// A failure prints the seed (round), the compositions and the operation log.
/// `STRATA_REDIS_DIFF_SEEDS` (count, 16), `STRATA_REDIS_DIFF_FIRST_SEED`,
/// `STRATA_REDIS_DIFF_OPS` (60), `STRATA_REDIS_DIFF_ROUNDS` (20),
/// `STRATA_REDIS_DIFF_FIRST_ROUND`, `STRATA_REDIS_DIFF_CONCURRENT_OPS` (40 per
/// task) and `STRATA_REDIS_DIFF_WAIT_MS` (1000) change the run;
/// `STRATA_REDIS_DIFF_CLI=1` sends some raw writes through `redis-cli`.
@Suite(.serialized) struct RedisDifferentialTests {
    typealias Level = any CacheLevel<String, String>

    // MARK: Random numbers

    typealias Generator = SeededGenerator

    static func environment(_ name: String) -> Int? { ProcessInfo.processInfo.environment[name].flatMap { Int($0) } }

    /// How long a change may take to reach every composition.
    static var convergence: Duration { .milliseconds(environment("STRATA_REDIS_DIFF_WAIT_MS") ?? 1000) }

    /// Redis' clock counts milliseconds: the allowance past a deadline.
    static let slack = Duration.milliseconds(2)

    static func now() -> CacheInstant { SystemClock().now() }

    /// Whether some raw writes go through a `redis-cli` process (`STRATA_REDIS_DIFF_CLI=1`). Off by
    /// default: Foundation's `Process.run()` in this toolchain over-reads `/proc/self/fd` entries now
    /// and then and crashes the test process (swift-corelibs-foundation PR #5472); thousands of
    /// spawns made that happen once. The plain `RedisClient` connection is not Strata either.
    static let usesCLI = environment("STRATA_REDIS_DIFF_CLI") == 1

    static func time(_ instant: CacheInstant, from start: CacheInstant) -> String {
        let ms = Double(instant.nanosecondsSince1970 - start.nanosecondsSince1970) / 1e6
        return String(format: "+%.1fms", ms)
    }

    // MARK: The origin

    /// The source of truth every composition with an origin reads: a
    /// generation per key, bumped by the test; it records what it served.
    final class Origin: Fetcher {
        typealias Key = String
        typealias Value = String
        struct State {
            var generations: [String: Int] = [:]
            var served: [(key: String, value: String)] = []
            /// When each value was last served.
            var lastServed: [String: CacheInstant] = [:]
        }
        let state = Mutex(State())
        /// Up to this many microseconds per answer (a slow source widens the races).
        let latency: Int

        init(latency: Int = 0) { self.latency = latency }

        var name: String { "origin" }

        static func value(_ key: String, _ generation: Int) -> String { "o-\(key)-g\(generation)" }

        /// The generation of an origin value, if `value` is one of `key`'s.
        static func generation(of value: String, key: String) -> Int? {
            let head = "o-\(key)-g"
            guard value.hasPrefix(head) else { return nil }
            return Int(value.dropFirst(head.count))
        }

        func current(_ key: String) -> String { state.withLock { Self.value(key, $0.generations[key, default: 0]) } }
        func generation(_ key: String) -> Int { state.withLock { $0.generations[key, default: 0] } }

        @discardableResult
        func bump(_ key: String) -> String {
            state.withLock { state in
                state.generations[key, default: 0] += 1
                return Self.value(key, state.generations[key]!)
            }
        }

        func getIfPresent(_ key: String) async throws -> String? { try await entry(forKey: key)?.value }

        func entry(forKey key: String) async throws -> CacheEntry<String>? {
            if latency > 0 { try await Task.sleep(for: .microseconds(Int.random(in: 0...latency))) }
            let value = state.withLock { state in
                let value = Self.value(key, state.generations[key, default: 0])
                state.served.append((key, value))
                state.lastServed[value] = RedisDifferentialTests.now()
                return value
            }
            return CacheEntry(value: value)
        }

        func takeServed() -> [(key: String, value: String)] {
            state.withLock { state in defer { state.served = [] }; return state.served }
        }
    }

    // MARK: Compositions

    /// Invalidations a Redis level published, as heard by a listener registered after a composition's own.
    final class Heard: Sendable {
        private let counts = Mutex<[String: Int]>([:])
        /// The subscription it hears through, for as long as it lives.
        let subscription = Mutex<CacheSubscription?>(nil)
        /// Keys heard, with `.all` counted for every key.
        func count(_ key: String) -> Int { counts.withLock { $0[key, default: 0] + $0["*", default: 0] } }
        func add(_ invalidation: CacheInvalidation<String>) {
            switch invalidation {
            case .key(let key): counts.withLock { $0[key, default: 0] += 1 }
            case .all, .contactLost: counts.withLock { $0["*", default: 0] += 1 }
            }
        }
    }

    final class Composition: Sendable {
        let heard = Heard()
        let index: Int
        let text: String
        let cache: Level
        let redis: RedisCacheLevel<String, String>
        /// Whether this composition made `redis` (and shuts it down).
        let ownsRedis: Bool
        let hasOrigin: Bool
        let directory: TemporaryDirectory?

        init(index: Int, text: String, cache: Level, redis: RedisCacheLevel<String, String>, ownsRedis: Bool,
             hasOrigin: Bool, directory: TemporaryDirectory?) {
            self.index = index
            self.text = text
            self.cache = cache
            self.redis = redis
            self.ownsRedis = ownsRedis
            self.hasOrigin = hasOrigin
            self.directory = directory
        }

        var label: String { "C\(index)" }
    }

    /// Composes two levels given as existentials (opening each).
    static func compose(_ upper: Level, _ lower: Level) -> Level { composeOpening(upper, lower) }
    static func composeOpening<A: CacheLevel<String, String>>(_ upper: A, _ lower: Level) -> Level { composeOpened(upper, lower) }
    static func composeOpened<A: CacheLevel<String, String>, B: CacheLevel<String, String>>(_ upper: A, _ lower: B) -> Level { upper + lower }
    static func pooled<A: CacheLevel<String, String>>(_ level: A) -> Level { level.pooled() }

    static func makeCompositions(_ random: inout Generator, server: RedisServer, prefix: String, origin: Origin,
                                 redisTTL: Duration?) throws -> [Composition] {
        let count = random.int(3..<6)
        var compositions: [Composition] = []
        var ttls: [String: Duration] = [:]
        func memory(_ name: String) -> MemoryCacheLevel<String, String> {
            let ttl: Duration?
            if let redisTTL {
                ttl = random.pick([redisTTL, redisTTL / 2])
            } else {
                ttl = random.pick([nil, nil, .milliseconds(300), .seconds(1)])
            }
            ttls[name] = ttl
            return MemoryCacheLevel<String, String>(name: name, capacity: 1 << 20,
                                                    policy: random.chance(0.5) ? .lru : .adaptive, defaultTTL: ttl)
        }
        func ttlText(_ level: MemoryCacheLevel<String, String>) -> String {
            "\(level.name)\(ttls[level.name].map { "(ttl \($0))" } ?? "")"
        }
        for index in 0..<count {

            let originLevel: Level = random.chance(0.3) ? pooled(origin) : origin
            let originText = originLevel is Origin ? "origin" : "origin.pooled()"
            var shape = random.int(0..<8)
            if shape == 6 && !compositions.contains(where: { $0.ownsRedis && $0.redis.invalidatesLevelsAbove }) { shape = 0 }
            let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: prefix, defaultTTL: redisTTL,
                                                            invalidatesLevelsAbove: shape != 7)
            let upper = memory("m\(index)")
            let redisText = "redis\(redisTTL.map { "(ttl \($0))" } ?? "")"
            switch shape {
            case 0:
                compositions.append(Composition(index: index, text: "\(ttlText(upper)) + \(redisText)",
                                                cache: upper + redis, redis: redis, ownsRedis: true, hasOrigin: false,
                                                directory: nil))
            case 1:
                compositions.append(Composition(index: index, text: "\(ttlText(upper)) + \(redisText) + \(originText)",
                                                cache: compose(upper + redis, originLevel),
                                                redis: redis, ownsRedis: true, hasOrigin: true, directory: nil))
            case 2:
                let inner = compose(redis, originLevel)
                compositions.append(Composition(index: index, text: "\(ttlText(upper)) + (\(redisText) + \(originText))",
                                                cache: compose(upper, inner), redis: redis, ownsRedis: true,
                                                hasOrigin: true, directory: nil))
            case 3:
                let top = memory("top\(index)")
                compositions.append(Composition(index: index, text: "\(ttlText(top)) + \(ttlText(upper)) + \(redisText)",
                                                cache: top + upper + redis, redis: redis, ownsRedis: true,
                                                hasOrigin: false, directory: nil))
            case 4:
                let directory = TemporaryDirectory("strata-redis-diff")
                let diskTTL = ttls[upper.name]
                let disk = try DiskCacheLevel<String, String>(name: "d\(index)", directory: directory.url,
                                                              capacity: 1 << 20, defaultTTL: diskTTL)
                let withOrigin = random.chance(0.5)
                let stack = upper + disk + redis
                compositions.append(Composition(
                    index: index,
                    text: "\(ttlText(upper)) + disk\(diskTTL.map { "(ttl \($0))" } ?? "") + \(redisText)\(withOrigin ? " + \(originText)" : "")",
                    cache: withOrigin ? compose(stack, originLevel) : stack, redis: redis, ownsRedis: true,
                    hasOrigin: withOrigin, directory: directory))
            case 5:
                compositions.append(Composition(index: index, text: "\(redisText) + \(originText)",
                                                cache: compose(redis, originLevel), redis: redis,
                                                ownsRedis: true, hasOrigin: true, directory: nil))
            case 7:
                // Nothing above Redis, so no tracking: only `SET NX` and the tombstones guard its back-fills.
                compositions.append(Composition(index: index, text: "\(redisText)(invalidatesLevelsAbove: false) + \(originText)",
                                                cache: compose(redis, originLevel), redis: redis,
                                                ownsRedis: true, hasOrigin: true, directory: nil))
            default:
                // Another composition's Redis level object: its writes reach this one by the level's own report.
                let shared = random.pick(compositions.filter { $0.ownsRedis && $0.redis.invalidatesLevelsAbove })
                compositions.append(Composition(index: index, text: "\(ttlText(upper)) + \(shared.label)'s redis",
                                                cache: upper + shared.redis, redis: shared.redis, ownsRedis: false,
                                                hasOrigin: false, directory: nil))
            }
        }
        for composition in compositions where composition.redis.invalidatesLevelsAbove {
            let heard = composition.heard
            heard.subscription.withLock { $0 = composition.redis.subscribe { heard.add($0.invalidation) } }
        }
        return compositions
    }

    static func shutdown(_ compositions: [Composition]) async {
        for composition in compositions { await composition.cache.waitForPendingWrites() }
        for composition in compositions where composition.ownsRedis { await composition.redis.shutdown() }
        for composition in compositions { composition.directory?.remove() }
    }

    /// Waits until every Redis level is subscribed (a level's operations also wait for it, at most 250 ms).
    /// Polls as long as the other subscription waits (``poll(timeout:_:)``'s
    /// default): a loaded machine can take seconds to connect and subscribe.
    static func subscribed(_ compositions: [Composition]) async -> Bool {
        await poll { compositions.allSatisfy { $0.redis.isReceivingInvalidations || !$0.redis.invalidatesLevelsAbove } }
    }

    // MARK: Raw access (a client that is not Strata)

    /// The Redis name of `key` under `prefix` (the natural layout, see the README).
    static func rawName(_ prefix: String, _ key: String) -> String { prefix + key }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Kills one tracking connection (`CLIENT KILL ID`), picked by `pick` among them; returns its id.
    static func killTracking(_ raw: RedisClient, pick: (Int) -> Int) async throws -> String? {
        guard case .bulkString(let buffer?) = try await raw.send(["CLIENT", "LIST"]) else { return nil }
        let ids = String(buffer: buffer).split(separator: "\n").filter { $0.contains("name=strata-invalidation ") }
            .compactMap { $0.split(separator: " ").first { $0.hasPrefix("id=") }.map { String($0.dropFirst(3)) } }
        guard !ids.isEmpty else { return nil }
        let id = ids[pick(ids.count)]
        _ = try await raw.send(["CLIENT", "KILL", "ID", id])
        return id
    }

    /// What Redis holds for `name`, with a latest possible deadline from `PTTL`.
    struct RawState: Equatable, CustomStringConvertible {
        var value: String?
        /// `PTTL`'s milliseconds (-1: no expiry, -2: no key).
        var pttl: Int
        /// The latest the key can be readable until (`nil`: never expires).
        var latestDeadline: CacheInstant?
        var earliestDeadline: CacheInstant?
        var description: String { value.map { "\($0) (pttl \(pttl))" } ?? "nothing" }
        static func == (lhs: RawState, rhs: RawState) -> Bool { lhs.value == rhs.value }
    }

    static func rawRead(_ raw: RedisClient, _ name: String) async throws -> RawState {
        let before = now()
        let replies = try await raw.send(transaction: [[bytes("GET"), bytes(name)], [bytes("PTTL"), bytes(name)]])
        let after = now()
        var value: String?
        if case .bulkString(let buffer?) = replies[0] { value = String(buffer: buffer) }
        guard case .integer(let pttl) = replies[1] else { throw RedisError.protocolError("PTTL answered \(replies[1])") }
        if pttl >= 0 {
            return RawState(value: value, pttl: pttl,
                            latestDeadline: after.advanced(by: .milliseconds(pttl + 1)),
                            earliestDeadline: before.advanced(by: .milliseconds(pttl - 1)))
        }
        return RawState(value: value, pttl: pttl, latestDeadline: nil, earliestDeadline: nil)
    }

    // MARK: Reads

    struct Answer: CustomStringConvertible {
        var value: String?
        /// The entry's deadline, when read through `entry(forKey:)`.
        var expiresAt: CacheInstant?
        var hasEntry = false
        var error: String?
        var started: CacheInstant
        var ended: CacheInstant
        var path: String
        var description: String {
            if let error { return "error \(error) [\(path)]" }
            let deadline = hasEntry && value != nil ? " (expires \(expiresAt.map { "\($0.nanosecondsSince1970 / 1_000_000)ms" } ?? "never"))" : ""
            return "\(value ?? "nothing")\(deadline) [\(path)]"
        }
    }

    static let pathNames = ["getIfPresent", "entry", "get", "batch"]

    static func read(_ composition: Composition, _ key: String, path: Int, other: String) async -> Answer {
        let started = now()
        var answer = Answer(value: nil, started: started, ended: started, path: pathNames[path])
        do {
            switch path {
            case 0: answer.value = try await composition.cache.getIfPresent(key)
            case 1:
                let entry = try await composition.cache.entry(forKey: key)
                answer.value = entry?.value
                answer.expiresAt = entry?.expiresAt
                answer.hasEntry = true
            case 2:
                do { answer.value = try await composition.cache.get(key) } catch FetchError.valueNotInCache { answer.value = nil }
            default:
                answer.value = await composition.cache.batchGetSome([key, other])[key]
            }
        } catch {
            answer.error = "\(error)"
        }
        answer.ended = now()
        return answer
    }
}

// MARK: - Sequential

extension RedisDifferentialTests {
    /// What is known of one written value's lifetime.
    struct Lifetime {
        /// Readable at least until then (`nil`: never expires).
        var earliest: CacheInstant?
        /// Readable no later than this, for reads beginning at or after `from` (in order).
        var latest: [(from: CacheInstant, deadline: CacheInstant?)]

        func latest(at instant: CacheInstant) -> CacheInstant? {
            var bound = latest[0].deadline
            for (from, deadline) in latest where from <= instant { bound = deadline }
            return bound
        }
    }

    struct Model {
        /// What Redis must hold per key: the last value written there, or nothing.
        var stored: [String: String] = [:]
        var lifetimes: [String: Lifetime] = [:]
        /// Origin answers that may still be cached, per key (since the last set, remove or clear through Strata).
        var servedOrigin: [String: Set<String>] = [:]

        mutating func note(_ served: [(key: String, value: String)]) {
            for (key, value) in served { servedOrigin[key, default: []].insert(value) }
        }

        mutating func fence(_ key: String) { servedOrigin[key] = [] }

        func originAnswers(_ key: String, _ origin: Origin) -> Set<String> {
            servedOrigin[key, default: []].union([origin.current(key)])
        }
    }

    enum Verdict {
        case ok
        /// Not (yet) what the model admits: may be the invalidation delay.
        case stale(String)
        /// Always a violation, whenever it happens.
        case broken(String)
    }

    /// Judges `answer` of `composition` (`nil`: Redis itself) for `key`.
    static func judge(_ answer: Answer, _ composition: Composition?, _ key: String, _ model: Model,
                      _ origin: Origin) -> Verdict {
        if let error = answer.error { return .stale("failed: \(error)") }
        // No value outlives its TTL, whatever path brought it.
        if let value = answer.value, let lifetime = model.lifetimes[value] {
            let latest = lifetime.latest(at: answer.started)
            if let latest, answer.started > latest.advanced(by: slack) {
                return .broken("answered \(value) \(time(answer.started, from: latest)) after its latest deadline")
            }
            if answer.hasEntry, let latest {
                guard let expiresAt = answer.expiresAt, expiresAt <= latest.advanced(by: slack) else {
                    return .broken("entry of \(value) expires \(answer.expiresAt.map { time($0, from: latest) + " after" } ?? "never, not") at its latest deadline")
                }
            }
        }
        let hasOrigin = composition?.hasOrigin ?? false
        let originAnswers = model.originAnswers(key, origin)
        func absent(_ value: String?) -> Bool {
            guard let value else { return !hasOrigin }
            return originAnswers.contains(value)
        }
        guard let stored = model.stored[key] else {
            if absent(answer.value) { return .ok }
            return .stale("expected \(hasOrigin ? "one of \(originAnswers.sorted())" : "nothing or one of \(originAnswers.sorted())")")
        }
        let lifetime = model.lifetimes[stored]!
        let mayBeAlive = lifetime.latest(at: answer.started).map { answer.started <= $0.advanced(by: slack) } ?? true
        let mayBeGone = lifetime.earliest.map { answer.ended >= $0.advanced(by: .zero - slack) } ?? false
        if answer.value == stored && mayBeAlive { return .ok }
        if mayBeGone && absent(answer.value) { return .ok }
        return .stale("expected \(stored)\(mayBeGone ? " or its absence" : "")")
    }

    enum Operation: CustomStringConvertible {
        case get(Int, String, path: Int)
        case set(Int, String, value: String, ttl: Int?)
        case remove(Int, String)
        case clear(Int)
        case rawSet(String, value: String, px: Int?, cli: Bool)
        case rawDelete(String, cli: Bool)
        case rawExpire(String, milliseconds: Int)
        case rawFlush
        /// `CLIENT KILL` of a tracking connection (the levels above are flushed, it subscribes
        /// again), then at once a raw `SET`, which that connection may miss.
        case killTracking(String, value: String)
        case originChange(String, removeThrough: Int?)
        /// A raw `DEL`, a get through `reader` (its back-fill left in flight), then at once a set through `writer`.
        case missThenSet(reader: Int, writer: Int, String, value: String)
        /// A raw `DEL`, a get through `reader` (its back-fill left in flight), then at once the origin
        /// changes and `writer` removes the key (cache-aside).
        case missThenChange(reader: Int, writer: Int, String)
        case wait

        var description: String {
            switch self {
            case .get(let c, let key, let path): "C\(c).\(pathNames[path])(\(key))"
            case .set(let c, let key, let value, let ttl): "C\(c).set(\(value), \(key)\(ttl.map { ", expires in \($0)ms" } ?? ""))"
            case .remove(let c, let key): "C\(c).remove(\(key))"
            case .clear(let c): "C\(c).clear()"
            case .rawSet(let key, let value, let px, let cli): "\(cli ? "redis-cli" : "raw") SET \(key) \(value)\(px.map { " PX \($0)" } ?? "")"
            case .rawDelete(let key, let cli): "\(cli ? "redis-cli" : "raw") DEL \(key)"
            case .rawExpire(let key, let ms): "raw PEXPIRE \(key) \(ms)"
            case .rawFlush: "raw FLUSHDB"
            case .killTracking(let key, let value): "raw CLIENT KILL of a tracking connection, then raw SET \(key) \(value)"
            case .originChange(let key, let c): "origin changes \(key)\(c.map { ", then C\($0).remove(\(key))" } ?? " (nothing removed)")"
            case .missThenSet(let reader, let writer, let key, let value): "raw DEL \(key), C\(reader).get(\(key)), C\(writer).set(\(value), \(key))"
            case .missThenChange(let reader, let writer, let key): "raw DEL \(key), C\(reader).get(\(key)), origin changes \(key), C\(writer).remove(\(key))"
            case .wait: "wait for the next deadline"
            }
        }
    }

    static let keys = ["k0", "k1", "a:b", "p%q"]

    /// Runs one seed; returns a failure report or `nil`.
    static func run(seed: UInt64, operations: Int, server: RedisServer, raw: RedisClient) async throws -> String? {
        var random = Generator(seed: seed)
        let prefix = "rdiff\(seed):"
        let origin = Origin(latency: random.pick([0, 0, 500, 3_000]))
        let redisTTL: Duration? = random.pick([nil, nil, nil, .milliseconds(300), .milliseconds(1200)])
        let compositions = try makeCompositions(&random, server: server, prefix: prefix, origin: origin, redisTTL: redisTTL)
        let waitsAfterReads = random.chance(0.5)
        let startsAtOnce = random.chance(0.5)
        defer { tally("seeds") }
        var log: [String] = ["seed \(seed), prefix \(prefix), origin latency up to \(origin.latency) µs, \(waitsAfterReads ? "waiting for back-fills after reads" : "back-fills left in flight")"]
            + compositions.map { "  \($0.label): \($0.text)" }
        let start = now()
        var model = Model()
        var counter = 0
        func report(_ step: Int, _ problem: String) -> String {
            (log.prefix(compositions.count + 1) + ["  …"] + log.dropFirst(compositions.count + 1).suffix(60)
                + ["VIOLATION at step \(step): \(problem)"]).joined(separator: "\n")
        }
        // Half the seeds start at once: the first operations race the tracking subscriptions
        // (a level used before it subscribed flushes the levels above once it does).
        if startsAtOnce {
            log[0] += ", starting before the tracking connections subscribed"
        } else if await !subscribed(compositions) {
            await shutdown(compositions)
            return report(0, "the Redis levels did not subscribe")
        }
        /// When a failing read ran, and what the composition's tracking connection had done by then:
        /// tells a late back-fill from a flush that never came (or a value Redis expired early).
        func diagnosis(_ composition: Composition, _ answer: Answer) -> String {
            let redis = composition.redis
            return "read \(time(answer.started, from: start))…\(time(answer.ended, from: start)); \(composition.label)'s tracking: "
                + "receiving \(redis.isReceivingInvalidations), subscribed \(redis.invalidationSubscriptions)x, "
                + "\(redis.nearCacheFlushes) flushes, \(redis.invalidationsReceived) keys heard"
        }
        func settle() async {
            for composition in compositions { await composition.cache.waitForPendingWrites() }
        }
        func note() { model.note(origin.takeServed()) }
        /// A set through a composition that took `t0…t1`, with deadline `given` or the Redis level's `ttl`.
        func lifetime(_ t0: CacheInstant, _ t1: CacheInstant, given: CacheInstant?, ttl: Duration?) -> Lifetime {
            let took = Duration.nanoseconds(t1.nanosecondsSince1970 - t0.nanosecondsSince1970)
            if let given {
                // Redis counts `PX` from when it runs the command, in whole milliseconds.
                return Lifetime(earliest: given.advanced(by: .milliseconds(-2)),
                                latest: [(start, given.advanced(by: took + .milliseconds(1)))])
            }
            guard let ttl else { return Lifetime(earliest: nil, latest: [(start, nil)]) }
            return Lifetime(earliest: t0.advanced(by: ttl - .milliseconds(2)),
                            latest: [(start, t1.advanced(by: ttl + took + .milliseconds(1)))])
        }
        func finish(_ result: String?) async -> String? {
            await shutdown(compositions)
            return result
        }

        /// Every composition answers `key` admissibly (polled), then Redis does.
        /// A raw `DEL` of `key`, and, if it deleted something, the wait until `composition` has applied its invalidation.
        func rawDelete(_ key: String, heardBy composition: Composition) async throws -> String? {
            let before = composition.heard.count(key)
            let reply = try await raw.send("DEL", rawName(prefix, key))
            guard reply == .integer(1), composition.redis.invalidatesLevelsAbove else { return nil }
            if await poll(timeout: convergence, { composition.heard.count(key) > before }) { return nil }
            return "\(composition.label) heard no invalidation of \(key) \(convergence) after a DEL that deleted it"
        }

        /// `shortened`: a value whose deadline another client just brought forward; a copy with the old one is stale.
        func converge(_ keys: [String], shortened: (value: String, latest: CacheInstant)?) async throws -> String? {
            let deadline = ContinuousClock.now + convergence
            for key in keys {
                for composition in compositions {
                    while true {
                        let answer = await read(composition, key, path: 1, other: key)
                        note()
                        var verdict = judge(answer, composition, key, model, origin)
                        if case .ok = verdict, let shortened, answer.value == shortened.value,
                           !(answer.expiresAt.map { $0 <= shortened.latest.advanced(by: slack) } ?? false) {
                            verdict = .stale("a copy of \(shortened.value) with its old deadline")
                        }
                        switch verdict {
                        case .ok: break
                        case .broken(let why):
                            return "\(composition.label) \(key): \(answer): \(why)"
                        case .stale(let why):
                            if ContinuousClock.now < deadline {
                                tally("stale answers waited out")
                                try? await Task.sleep(for: .milliseconds(1))
                                continue
                            }
                            return "\(composition.label) \(key) still answers \(answer) \(convergence) after the write: \(why) (\(diagnosis(composition, answer)))"
                        }
                        break
                    }
                }
                let rawAnswer = try await rawRead(raw, rawName(prefix, key))
                let asAnswer = Answer(value: rawAnswer.value, expiresAt: rawAnswer.earliestDeadline, hasEntry: false,
                                      started: now(), ended: now(), path: "raw")
                if case .stale(let why) = judge(asAnswer, nil, key, model, origin) {
                    // Redis' own expiry: a key past its deadline may still be counted until the read
                    return "Redis holds \(rawAnswer) for \(key): \(why)"
                }
                if let stored = model.stored[key], rawAnswer.value == stored {
                    let latest = shortened?.value == stored ? shortened?.latest : model.lifetimes[stored]!.latest(at: asAnswer.started)
                    switch (latest, rawAnswer.earliestDeadline) {
                    case (nil, nil): break
                    case (nil, .some): return "Redis holds \(stored) for \(key) with a TTL (\(rawAnswer.pttl) ms); none was set"
                    case (.some, nil): return "Redis holds \(stored) for \(key) without the TTL it was set with"
                    case (.some(let latest), .some(let earliest)):
                        if earliest > latest.advanced(by: slack) {
                            return "Redis holds \(stored) for \(key) until \(time(earliest, from: latest)) past its latest deadline"
                        }
                    }
                }
            }
            return nil
        }

        /// Every composition answers every key in `keys` admissibly, now (no poll).
        func strict(_ keys: [String], random: inout Generator, what: String) async -> String? {
            for key in keys {
                for composition in compositions {
                    let path = random.int(0..<4)
                    let answer = await read(composition, key, path: path, other: random.pick(Self.keys))
                    note()
                    switch judge(answer, composition, key, model, origin) {
                    case .ok: continue
                    case .broken(let why), .stale(let why):
                        return "\(what): \(composition.label) \(key) answered \(answer): \(why) (\(diagnosis(composition, answer)))"
                    }
                }
            }
            return nil
        }

        for step in 1...operations {
            let operation = nextOperation(&random, model: model, compositions: compositions, counter: &counter,
                                          hasDeadlines: model.stored.values.contains { model.lifetimes[$0]?.latest(at: now()) != nil })
            let began = now()
            var text = ""
            var touched: [String] = []
            var writer: Composition?
            var shortened: (value: String, latest: CacheInstant)?
            note()
            do {
                switch operation {
                case .get(let c, let key, let path):
                    let answer = await read(compositions[c], key, path: path, other: random.pick(keys))
                    note()
                    text = "\(answer)"
                    log.append("\(step): \(time(began, from: start)) \(operation) → \(text)")
                    switch judge(answer, compositions[c], key, model, origin) {
                    case .ok: break
                    case .stale(let why), .broken(let why): return await finish(report(step, "C\(c) \(key) answered \(answer): \(why)"))
                    }
                    if waitsAfterReads { await compositions[c].cache.waitForPendingWrites() }
                    continue
                case .set(let c, let key, let value, let ttl):
                    model.fence(key)
                    let given = ttl.map { began.advanced(by: .milliseconds($0)) }
                    try await compositions[c].cache.set(value, forKey: key, expiresAt: given)
                    let ended = now()
                    model.stored[key] = value
                    model.lifetimes[value] = lifetime(began, ended, given: given, ttl: redisTTL)
                    touched = [key]
                    writer = compositions[c]
                case .remove(let c, let key):
                    model.fence(key)
                    try await compositions[c].cache.remove(key)
                    model.stored[key] = nil
                    touched = [key]
                    writer = compositions[c]
                case .clear(let c):
                    for key in keys { model.fence(key) }
                    await compositions[c].cache.clear()
                    model.stored = [:]
                    touched = keys
                    writer = compositions[c]
                case .rawSet(let key, let value, let px, let cli):
                    let name = rawName(prefix, key)
                    if cli {
                        let output = try await redisCLIArguments(server, ["SET", name, value] + (px.map { ["PX", "\($0)"] } ?? []))
                        guard output.contains("OK") else { return await finish(report(step, "redis-cli SET answered \(output)")) }
                    } else {
                        _ = try await raw.send(["SET", name, value] + (px.map { ["PX", "\($0)"] } ?? []))
                    }
                    let ended = now()
                    model.stored[key] = value
                    model.lifetimes[value] = px.map {
                        Lifetime(earliest: began.advanced(by: .milliseconds($0 - 1)),
                                 latest: [(start, ended.advanced(by: .milliseconds($0 + 1)))])
                    } ?? Lifetime(earliest: nil, latest: [(start, nil)])
                    touched = [key]
                case .rawDelete(let key, let cli):
                    if cli { try await redisCLI(server, "DEL", rawName(prefix, key)) } else { _ = try await raw.send("DEL", rawName(prefix, key)) }
                    model.stored[key] = nil
                    touched = [key]
                case .rawExpire(let key, let milliseconds):
                    let reply = try await raw.send("PEXPIRE", rawName(prefix, key), "\(milliseconds)")
                    let ended = now()
                    text = "\(reply)"
                    if let stored = model.stored[key] {
                        if reply == .integer(1) {
                            model.lifetimes[stored]!.earliest = began.advanced(by: .milliseconds(milliseconds - 1))
                            // The shorter bound holds for reads once every composition has dropped its copy (below).
                            shortened = (stored, ended.advanced(by: .milliseconds(milliseconds + 1)))
                        } else if !(model.lifetimes[stored]!.earliest.map { ended >= $0 } ?? false) {
                            return await finish(report(step, "PEXPIRE found no \(key), which should hold \(stored)"))
                        } else {
                            model.stored[key] = nil  // expired meanwhile
                        }
                    }
                    touched = [key]
                case .rawFlush:
                    _ = try await raw.send("FLUSHDB")
                    model.stored = [:]
                    touched = keys
                case .killTracking(let key, let value):
                    // Then at once a write by another client, which the killed connection may miss.
                    text = "id \(try await killTracking(raw) { random.int(0..<$0) } ?? "none")"
                    _ = try await raw.send(["SET", rawName(prefix, key), value])
                    model.stored[key] = value
                    model.lifetimes[value] = Lifetime(earliest: nil, latest: [(start, nil)])
                    touched = keys
                case .originChange(let key, let c):
                    let value = origin.bump(key)
                    text = "now \(value)"
                    if let c {
                        model.fence(key)
                        try await compositions[c].cache.remove(key)
                        model.stored[key] = nil
                        writer = compositions[c]
                    }
                    touched = [key]
                case .missThenSet(let reader, let c, let key, let value):
                    if let problem = try await rawDelete(key, heardBy: compositions[reader]) { return await finish(report(step, problem)) }
                    model.stored[key] = nil
                    let answer = await read(compositions[reader], key, path: 1, other: key)
                    note()
                    text = "C\(reader) answered \(answer)"
                    if case .stale(let why) = judge(answer, compositions[reader], key, model, origin) {
                        return await finish(report(step, "C\(reader) answered \(answer) for \(key) after the DEL: \(why)"))
                    }
                    model.fence(key)
                    let setBegan = now()
                    try await compositions[c].cache.set(value, forKey: key)
                    model.stored[key] = value
                    model.lifetimes[value] = lifetime(setBegan, now(), given: nil, ttl: redisTTL)
                    touched = [key]
                    writer = compositions[c]
                case .missThenChange(let reader, let c, let key):
                    if let problem = try await rawDelete(key, heardBy: compositions[reader]) { return await finish(report(step, problem)) }
                    model.stored[key] = nil
                    let answer = await read(compositions[reader], key, path: 1, other: key)
                    note()
                    if case .stale(let why) = judge(answer, compositions[reader], key, model, origin) {
                        return await finish(report(step, "C\(reader) answered \(answer) for \(key) after the DEL: \(why)"))
                    }
                    text = "C\(reader) answered \(answer); origin now \(origin.bump(key))"
                    model.fence(key)
                    try await compositions[c].cache.remove(key)
                    touched = [key]
                    writer = compositions[c]
                case .wait:
                    let instant = now()
                    let next = model.stored.values.compactMap { model.lifetimes[$0]?.latest(at: instant) }.filter { $0 > instant }.min()
                    guard let next else { continue }
                    let wait = min(Duration.nanoseconds(next.nanosecondsSince1970 - instant.nanosecondsSince1970) + .milliseconds(3), .milliseconds(300))
                    try await Task.sleep(for: wait)  // time passing is what is tested here
                    tallyTime("waiting for deadlines", wait)
                    text = "\(wait)"
                    log.append("\(step): \(time(began, from: start)) \(operation) \(text)")
                    if let problem = await strict(keys, random: &random, what: "after the deadline") { return await finish(report(step, problem)) }
                    continue
                }
            } catch {
                log.append("\(step): \(time(began, from: start)) \(operation) threw \(error)")
                return await finish(report(step, "\(operation) threw \(error)"))
            }
            log.append("\(step): \(time(began, from: start)) \(operation)\(text.isEmpty ? "" : " → \(text)")")
            // 1. Read-your-writes: the composition that wrote, at once.
            if let writer {
                for key in touched {
                    let answer = await read(writer, key, path: random.int(0..<4), other: random.pick(keys))
                    note()
                    switch judge(answer, writer, key, model, origin) {
                    case .ok: break
                    case .stale(let why), .broken(let why):
                        return await finish(report(step, "the writer \(writer.label) then answered \(answer) for \(key): \(why)"))
                    }
                }
            }
            // 2, 3. Every composition, within the wait; then Redis.
            let converging = ContinuousClock.now
            if let problem = try await converge(touched, shortened: shortened) { return await finish(report(step, problem)) }
            tallyTime("converging", ContinuousClock.now - converging)
            if let shortened { model.lifetimes[shortened.value]!.latest.append((now(), shortened.latest)) }
            // 4. Once back-fills settle, nothing old comes back.
            if waitsAfterReads || random.chance(0.5) {
                let settling = ContinuousClock.now
                defer { tallyTime("settling", ContinuousClock.now - settling) }
                await settle()
                if let problem = await strict(touched, random: &random, what: "after the back-fills settled") {
                    return await finish(report(step, problem))
                }
            }
        }
        await settle()
        if let problem = await strict(keys, random: &random, what: "at the end") { return await finish(report(operations, problem)) }
        return await finish(nil)
    }

    static func nextOperation(_ random: inout Generator, model: Model, compositions: [Composition], counter: inout Int,
                              hasDeadlines: Bool) -> Operation {
        let c = random.int(0..<compositions.count)
        let key = random.pick(keys)
        counter += 1
        switch random.int(0..<100) {
        case 0..<30: return .get(c, key, path: random.int(0..<4))
        case 30..<44: return .set(c, key, value: "s\(counter)", ttl: nil)
        case 44..<54: return .set(c, key, value: "s\(counter)", ttl: random.pick([25, 60, 150, 400, 900]))
        case 54..<63: return .remove(c, key)
        case 63..<65: return .clear(c)
        case 65..<72:
            return .rawSet(key, value: "r\(counter)", px: random.chance(0.3) ? random.pick([30, 120, 700]) : nil,
                           cli: usesCLI && random.chance(0.2))
        case 72..<77: return .rawDelete(key, cli: usesCLI && random.chance(0.2))
        case 77..<79: return .killTracking(key, value: "r\(counter)")
        case 79..<81:
            // Only shortening a key's life (a longer one would void what was read before).
            if let stored = model.stored[key], let lifetime = model.lifetimes[stored] {
                let left = lifetime.earliest.map { Int(($0.nanosecondsSince1970 - now().nanosecondsSince1970) / 1_000_000) - 10 } ?? 5_000
                if left > 20 { return .rawExpire(key, milliseconds: random.int(10..<min(left, 800))) }
            }
            return .rawDelete(key, cli: false)
        case 81: return random.chance(0.4) ? .rawFlush : .killTracking(key, value: "r\(counter)")
        case 82..<91: return .originChange(key, removeThrough: c)
        case 91..<93: return .originChange(key, removeThrough: nil)
        case 93..<96:
            let readers = compositions.filter(\.hasOrigin).map(\.index)
            guard let reader = readers.isEmpty ? nil : random.pick(readers) else { return .get(c, key, path: 1) }
            let other = random.pick(compositions.map(\.index).filter { $0 != reader })
            return random.chance(0.5) ? .missThenSet(reader: reader, writer: other, key, value: "s\(counter)")
                : .missThenChange(reader: reader, writer: random.chance(0.7) ? other : reader, key)
        default: return hasDeadlines ? .wait : .get(c, key, path: random.int(0..<4))
        }
    }

    static let tallies = Mutex<[String: Int]>([:])
    static func tally(_ what: String, _ count: Int = 1) { tallies.withLock { $0[what, default: 0] += count } }
    static func tallyTime(_ what: String, _ duration: Duration) { tally(what + " (ms)", Int(duration.nanoseconds / 1_000_000)) }

    @Test func randomOperationsOnSharedRedisAnswerLikeTheModel() async throws {
        let seeds = Self.environment("STRATA_REDIS_DIFF_SEEDS") ?? 16
        let first = Self.environment("STRATA_REDIS_DIFF_FIRST_SEED") ?? 1
        let operations = Self.environment("STRATA_REDIS_DIFF_OPS") ?? 60
        let server = try await RedisServer()
        let raw = try RedisClient(url: server.url)
        var failures: [String] = []
        let started = ContinuousClock.now
        for seed in first..<(first + seeds) {
            if let failure = try await Self.run(seed: UInt64(seed), operations: operations, server: server, raw: raw) {
                print(failure)
                failures.append(failure)
                if failures.count >= 3 { break }
            }
        }
        print("redis differential: \(seeds) seeds × \(operations) operations in \(ContinuousClock.now - started), \(failures.count) failing; "
              + Self.tallies.withLock { $0 }.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))
        for failure in failures { Issue.record(Comment(rawValue: failure)) }
        await raw.shutdown()
        await server.kill()
    }
}

extension RedisClient {
    /// `send` with the arguments as strings.
    func send(_ arguments: [String]) async throws -> RESPValue { try await send(arguments.map { Array($0.utf8) }) }
}


// MARK: - Concurrent

extension RedisDifferentialTests {
    /// A value written during a concurrent round, with what bounds its life.
    struct Written: Sendable {
        var deadline: CacheInstant?
        var milliseconds: Int?
        var began: CacheInstant
        var ended: CacheInstant?

        /// The latest it may be readable (`nil`: no bound); `nil` too while the write has not returned.
        var latest: CacheInstant? {
            guard let ended else { return nil }
            if let deadline {
                return deadline.advanced(by: .nanoseconds(ended.nanosecondsSince1970 - began.nanosecondsSince1970) + .milliseconds(1))
            }
            return milliseconds.map { ended.advanced(by: .milliseconds($0 + 1)) }
        }
    }

    /// What the tasks of a round did: every read, every value written, and a log.
    final class Journal: Sendable {
        struct Read: Sendable { var composition: Int; var key: String; var answer: Answer }
        let reads = Mutex<[Read]>([])
        let written = Mutex<[String: Written]>([:])
        let lines = Mutex<[(key: String, line: String)]>([])
        /// Completed writes: by which composition (-1: the raw client), of which key ("*": a clear), what.
        struct Write: Sendable { var composition: Int; var key: String; var value: String?; var began: CacheInstant; var ended: CacheInstant }
        let writes = Mutex<[Write]>([])
        let start: CacheInstant

        init(start: CacheInstant) { self.start = start }

        func log(_ key: String, _ line: String) {
            let entry = "\(RedisDifferentialTests.time(RedisDifferentialTests.now(), from: start)) \(line)"
            lines.withLock { $0.append((key, entry)) }
        }
        func began(_ value: String, deadline: CacheInstant?, milliseconds: Int?) {
            written.withLock { $0[value] = Written(deadline: deadline, milliseconds: milliseconds, began: RedisDifferentialTests.now()) }
        }
        func ended(_ value: String) { written.withLock { $0[value]?.ended = RedisDifferentialTests.now() } }
        func read(_ composition: Int, _ key: String, _ answer: Answer) {
            reads.withLock { $0.append(Read(composition: composition, key: key, answer: answer)) }
        }
        func wrote(_ composition: Int, _ key: String, _ value: String?, began: CacheInstant) {
            let write = Write(composition: composition, key: key, value: value, began: began, ended: RedisDifferentialTests.now())
            writes.withLock { $0.append(write) }
        }
        func history(_ key: String) -> [String] { lines.withLock { $0.filter { $0.key == key || $0.key == "*" }.map(\.line) } }
    }

    static let concurrentKeys = ["c0", "c:1", "c2"]

    /// One task's operations on one composition.
    static func hammer(_ composition: Composition, task: Int, seed: UInt64, operations: Int, origin: Origin,
                       journal: Journal) async {
        var random = Generator(seed: seed &* 1_000_003 &+ UInt64(composition.index * 16 + task))
        let who = "\(composition.label)/t\(task)"
        for step in 0..<operations {
            let key = random.pick(concurrentKeys)
            let began = now()
            let c = composition.index
            do {
                switch random.int(0..<100) {
                case 0..<48:
                    let answer = await read(composition, key, path: random.int(0..<4), other: random.pick(concurrentKeys))
                    journal.read(composition.index, key, answer)
                case 48..<64:
                    let value = "\(composition.label)t\(task)n\(step)"
                    journal.began(value, deadline: nil, milliseconds: nil)
                    journal.log(key, "\(who) set(\(value), \(key)) begins")
                    try await composition.cache.set(value, forKey: key)
                    journal.ended(value)
                    journal.wrote(c, key, value, began: began)
                    journal.log(key, "\(who) set(\(value), \(key)) returned")
                case 64..<74:
                    let value = "\(composition.label)t\(task)n\(step)"
                    let deadline = now().advanced(by: .milliseconds(random.pick([15, 40, 120, 5_000])))
                    journal.began(value, deadline: deadline, milliseconds: nil)
                    journal.log(key, "\(who) set(\(value), \(key), expiresAt \(time(deadline, from: journal.start))) begins")
                    try await composition.cache.set(value, forKey: key, expiresAt: deadline)
                    journal.ended(value)
                    journal.wrote(c, key, value, began: began)
                    journal.log(key, "\(who) set(\(value), \(key)) returned")
                case 74..<86:
                    journal.log(key, "\(who) remove(\(key)) begins")
                    try await composition.cache.remove(key)
                    journal.wrote(c, key, nil, began: began)
                    journal.log(key, "\(who) remove(\(key)) returned")
                case 86..<92:
                    let value = origin.bump(key)
                    journal.log(key, "origin now \(value); \(who) remove(\(key)) begins")
                    try await composition.cache.remove(key)
                    journal.wrote(c, key, nil, began: began)
                    journal.log(key, "\(who) remove(\(key)) after origin \(value) returned")
                case 92:
                    journal.log("*", "\(who) clear() begins")
                    await composition.cache.clear()
                    journal.wrote(c, "*", nil, began: began)
                    journal.log("*", "\(who) clear() returned")
                default:
                    let started = now()
                    let found = await composition.cache.batchGetSome(concurrentKeys)
                    let ended = now()
                    for key in concurrentKeys {
                        journal.read(composition.index, key, Answer(value: found[key], started: started, ended: ended, path: "batch"))
                    }
                }
            } catch {
                journal.log(key, "\(who) failed: \(error)")
            }
            if random.chance(0.4) { await Task.yield() }
        }
    }

    /// A client that is not Strata, writing meanwhile.
    static func rawWriter(_ raw: RedisClient, server: RedisServer, prefix: String, seed: UInt64, operations: Int,
                          journal: Journal) async {
        var random = Generator(seed: seed &* 7_919)
        for step in 0..<operations {
            let key = random.pick(concurrentKeys)
            let name = rawName(prefix, key)
            let began = now()
            do {
                switch random.int(0..<10) {
                case 0..<4:
                    let value = "raw\(step)"
                    let milliseconds: Int? = random.chance(0.4) ? random.pick([10, 50, 200]) : nil
                    let arguments = ["SET", name, value] + (milliseconds.map { ["PX", "\($0)"] } ?? [])
                    journal.began(value, deadline: nil, milliseconds: milliseconds)
                    journal.log(key, "raw \(arguments.joined(separator: " ")) begins")
                    if usesCLI && random.chance(0.15) {
                        try await redisCLIArguments(server, arguments)
                    } else {
                        _ = try await raw.send(arguments)
                    }
                    journal.ended(value)
                    journal.wrote(-1, key, value, began: began)
                    journal.log(key, "raw SET \(value) returned")
                case 4..<7:
                    _ = try await raw.send(["DEL", name])
                    journal.wrote(-1, key, nil, began: began)
                    journal.log(key, "raw DEL returned")
                case 7 where random.chance(0.15):
                    let id = try await killTracking(raw) { random.int(0..<$0) }
                    journal.log("*", "raw CLIENT KILL of tracking connection \(id ?? "none")")
                default:
                    let milliseconds = random.pick([5, 30, 100])
                    let reply = try await raw.send(["PEXPIRE", name, "\(milliseconds)", "LT"])
                    journal.wrote(-1, key, nil, began: began)
                    journal.log(key, "raw PEXPIRE \(milliseconds) LT → \(reply)")
                }
            } catch {
                journal.log(key, "raw failed: \(error)")
            }
            for _ in 0..<random.int(0..<8) { await Task.yield() }
        }
    }

    /// Whether `answer` of `composition` agrees with `redis`; `nil` if it does.
    static func disagreement(_ answer: Answer, _ composition: Composition, _ key: String, redis: RawState,
                             origin: Origin) -> String? {
        if let error = answer.error { return "failed: \(error)" }
        guard let value = redis.value else {
            let expected = composition.hasOrigin ? origin.current(key) : nil
            return answer.value == expected ? nil : "Redis holds nothing; expected \(expected ?? "nothing")"
        }
        guard answer.value == value else { return "Redis holds \(redis)" }
        if answer.hasEntry, let latest = redis.latestDeadline,
           !(answer.expiresAt.map { $0 <= latest.advanced(by: slack) } ?? false) {
            return "its deadline is later than Redis' (\(redis.pttl) ms left)"
        }
        return nil
    }

    /// Checks every composition against Redis for every key; `polling` waits (bounded) for agreement.
    static func agreement(_ compositions: [Composition], raw: RedisClient, prefix: String, origin: Origin,
                          polling: Bool) async throws -> String? {
        let deadline = ContinuousClock.now + convergence
        for key in concurrentKeys {
            var attempts = 0
            while true {
                attempts += 1
                let before = try await rawRead(raw, rawName(prefix, key))
                var answers: [(Composition, Answer)] = []
                for composition in compositions {
                    answers.append((composition, await read(composition, key, path: 1, other: key)))
                }
                let after = try await rawRead(raw, rawName(prefix, key))
                var problem: String?
                if before != after {
                    problem = "Redis changed during the check (\(before) → \(after))"
                } else if let value = after.value, let generation = Origin.generation(of: value, key: key),
                          generation < origin.generation(key) {
                    problem = "Redis holds \(value), an origin answer older than the last cache-aside remove"
                } else {
                    for (composition, answer) in answers {
                        if let why = disagreement(answer, composition, key, redis: after, origin: origin) {
                            problem = "\(composition.label) answers \(answer): \(why)"
                            break
                        }
                    }
                }
                guard let problem else { break }
                let changed = before != after
                if (polling && ContinuousClock.now < deadline) || (changed && attempts < 50) {
                    if polling { tally("concurrent: disagreements waited out") }
                    try? await Task.sleep(for: .milliseconds(1))
                    continue
                }
                return "\(key): \(problem)\(polling ? " \(convergence) after the last write" : " once the back-fills settled")"
            }
        }
        return nil
    }

    /// Runs one concurrent round; returns a failure report or `nil`.
    static func round(seed: UInt64, server: RedisServer, raw: RedisClient, operations: Int) async throws -> String? {
        var random = Generator(seed: seed ^ 0xC0C0)
        let prefix = "rdconc\(seed):"
        let origin = Origin(latency: random.pick([0, 0, 500, 3_000]))
        let compositions = try makeCompositions(&random, server: server, prefix: prefix, origin: origin, redisTTL: nil)
        let header = (["round \(seed), prefix \(prefix), origin latency up to \(origin.latency) µs"] + compositions.map { "  \($0.label): \($0.text)" }).joined(separator: "\n")
        guard await subscribed(compositions) else {
            await shutdown(compositions)
            return header + "\nthe Redis levels did not subscribe"
        }
        let journal = Journal(start: now())
        let tasks = 2
        await withTaskGroup(of: Void.self) { group in
            for composition in compositions {
                for task in 0..<tasks {
                    group.addTask {
                        await hammer(composition, task: task, seed: seed, operations: operations, origin: origin, journal: journal)
                    }
                }
            }
            group.addTask {
                await rawWriter(raw, server: server, prefix: prefix, seed: seed, operations: operations, journal: journal)
            }
        }
        journal.log("*", "every task returned")
        func report(_ problem: String, key: String?) async -> String {
            await shutdown(compositions)
            let history = key.map { journal.history($0).suffix(50).joined(separator: "\n  ") } ?? ""
            return "\(header)\nVIOLATION: \(problem)\n  \(history)"
        }
        // No read answered a value after its deadline.
        let written = journal.written.withLock { $0 }
        for read in journal.reads.withLock({ $0 }) {
            guard let value = read.answer.value, let latest = written[value]?.latest else { continue }
            if read.answer.started > latest.advanced(by: slack) {
                return await report("C\(read.composition) answered \(value) for \(read.key) at \(time(read.answer.started, from: journal.start)), \(time(read.answer.started, from: latest)) after its latest deadline", key: read.key)
            }
            if read.answer.hasEntry, !(read.answer.expiresAt.map { $0 <= latest.advanced(by: slack) } ?? false) {
                return await report("C\(read.composition) read \(value) for \(read.key) with a deadline later than its own", key: read.key)
            }
        }
        // Read-your-writes: once a composition's own write of a key has
        // returned, it never answers a value whose write had returned before
        // that write began (it overwrote it in every level of this composition).
        let writes = journal.writes.withLock { $0 }
        var byValue: [String: Journal.Write] = [:]
        for write in writes { if let value = write.value { byValue[value] = write } }
        for read in journal.reads.withLock({ $0 }) {
            guard let value = read.answer.value, let source = byValue[value] else { continue }
            if let own = writes.first(where: { own in
                own.composition == read.composition && (own.key == read.key || own.key == "*")
                    && own.ended < read.answer.started && source.ended < own.began
            }) {
                return await report("C\(read.composition) answered \(value) for \(read.key) at \(time(read.answer.started, from: journal.start)) [\(read.answer.path)], though its own \(own.key == "*" ? "clear" : own.value.map { "set of \($0)" } ?? "remove") (\(time(own.began, from: journal.start))…\(time(own.ended, from: journal.start))) came after that value's write returned (\(time(source.ended, from: journal.start)))", key: read.key)
            }
        }
        // The same for an origin answer every serving of which had ended
        // before the composition's own write began: only a back-fill of a read
        // older than that write can bring it back. Unless the write's value
        // may have gone meanwhile without a Strata remove (its deadline, or a
        // raw DEL or PEXPIRE): then a `SET NX` back-fill may land (an open
        // case the README lists).
        let lastServed = origin.state.withLock { $0.lastServed }
        for read in journal.reads.withLock({ $0 }) {
            guard let value = read.answer.value, let served = lastServed[value] else { continue }
            if let own = writes.first(where: { own in
                own.composition == read.composition && (own.key == read.key || own.key == "*")
                    && own.ended < read.answer.started && served < own.began
                    && !(own.value.flatMap { written[$0]?.deadline }.map { read.answer.started >= $0.advanced(by: .milliseconds(-2)) } ?? false)
                    && !writes.contains { $0.composition == -1 && $0.key == read.key && $0.ended >= own.began && $0.began <= read.answer.started }
            }) {
                return await report("C\(read.composition) answered the origin's \(value) for \(read.key) at \(time(read.answer.started, from: journal.start)) [\(read.answer.path)], though its own \(own.key == "*" ? "clear" : own.value.map { "set of \($0)" } ?? "remove") (\(time(own.began, from: journal.start))…\(time(own.ended, from: journal.start))) began after that answer was last served (\(time(served, from: journal.start)))", key: read.key)
            }
        }
        tally("concurrent: reads checked", journal.reads.withLock { $0.count })
        for composition in compositions { await composition.cache.waitForPendingWrites() }
        // Every composition agrees with Redis, within the wait.
        if let problem = try await agreement(compositions, raw: raw, prefix: prefix, origin: origin, polling: true) {
            return await report(problem, key: problem.components(separatedBy: ":").first)
        }
        // And still does once the back-fills settled (nothing old comes back).
        for composition in compositions { await composition.cache.waitForPendingWrites() }
        if let problem = try await agreement(compositions, raw: raw, prefix: prefix, origin: origin, polling: false) {
            return await report(problem, key: problem.components(separatedBy: ":").first)
        }
        await shutdown(compositions)
        return nil
    }

    @Test func concurrentWritersOnSharedRedisLeaveEveryCompositionAgreeingWithRedis() async throws {
        let rounds = Self.environment("STRATA_REDIS_DIFF_ROUNDS") ?? 20
        let first = Self.environment("STRATA_REDIS_DIFF_FIRST_ROUND") ?? 1
        let operations = Self.environment("STRATA_REDIS_DIFF_CONCURRENT_OPS") ?? 40
        let server = try await RedisServer()
        let raw = try RedisClient(url: server.url)
        var failures: [String] = []
        let started = ContinuousClock.now
        for round in first..<(first + rounds) {
            if let failure = try await Self.round(seed: UInt64(round), server: server, raw: raw, operations: operations) {
                print(failure)
                failures.append(failure)
                if failures.count >= 3 { break }
            }
        }
        print("redis differential, concurrent: \(rounds) rounds in \(ContinuousClock.now - started), \(failures.count) failing; "
              + Self.tallies.withLock { $0 }.filter { $0.key.hasPrefix("concurrent") }.sorted { $0.key < $1.key }
              .map { "\($0.key): \($0.value)" }.joined(separator: ", "))
        for failure in failures { Issue.record(Comment(rawValue: failure)) }
        await raw.shutdown()
        await server.kill()
    }
}
