import Foundation
import Strata
import StrataTestSupport
import Synchronization
import Testing

/// Rule 1 audit by differential testing: **the answer never changes because
/// of the cache.** Each seed builds a random composition of 2–4 real levels
/// (memory `.lru`/`.adaptive`, disk `.lru`/`.adaptive` in temporary
/// directories, a key-value store domain) with random wrappers between them,
/// in a random tree shape, over an origin whose values the test controls, and
/// runs a random sequence of operations against it and against a reference
/// model. Everything shares one ``TestClock``.
///
/// **Operations**: get through every read path (`get`, `getIfPresent`,
/// `entry(forKey:)`, a get through `any CacheLevel`, `values(forKey:)`,
/// `batchGetSome`, `entries(forKeys:)`); set (plain, or with a deadline on
/// the test clock; now and then a value too large for some level, which makes
/// the set fail there); remove; clear; memory warning; advancing the clock
/// (so that entries expire, often exactly at their deadline); the origin's
/// value changing (to another value, with or without a deadline of its own, or
/// to nothing); a condition or a switch lane toggled for a key; a level's
/// `removeExpired()`; the directory of a disk level or key-value store removed
/// from under it; a restart (the same levels made again over the same
/// directories, memory levels empty). After each operation the test waits for
/// the back-fills (`waitForPendingWrites()`); in half of the seeds reads do
/// not wait, so their back-fills land among the next writes (the clock moves
/// only once they have landed: a level's TTL runs from the back-fill).
///
/// **Wrappers**: `conditioned` (toggled per key), `switchLevels` (lane toggled
/// per key), `mapKeys` (injective, declining one key), `mapValues` (reversing
/// the stored string), a conditioned value transformation (declines values
/// ending in `!` on the way in and values ending in `?` on the way out),
/// `postProcess`, `expires(at:)` on the test clock, `pooled(clock:)`,
/// `capRequests`, `instrumented`, `concurrent()`, `normalize()`; on leaves and
/// on inner nodes of the tree (transforms only on nodes without the origin).
///
/// **The model** knows, per key, the last value set through the composition
/// (and until when it may live), the answers the origin gave since the last
/// set, remove or clear of the key (and until when each may live), and the
/// origin's current entry. From the README's guarantees ("a back-fill never
/// undoes a write", "no value outlives its TTL", "a failed set leaves no old
/// value to serve", remove/clear reach every level), a read of key `k` at time
/// `now` may answer exactly:
///
/// 1. the origin's current value, if it has one that has not expired;
/// 2. the value of the last set of `k` (failed or not: a failed set may have
///    stored it in the other levels), unless a remove or clear came after it,
///    while `now` is before its bound: its deadline for a set with one; else
///    the latest of the deadlines the levels give a plain set (each level's
///    outermost `expires(at:)`, else its `defaultTTL`, else never);
/// 3. a value the origin answered for `k` at time `t` since the last set,
///    remove or clear of `k`, while `now` is before the earlier of its
///    deadline at the origin and `t` plus the longest back-fill cap of any
///    level (a level's cap: the shortest of its `defaultTTL` and the
///    `expires(at:)` around it that do not also hold the origin; never if it
///    has none);
/// 4. a miss only when the origin has no live value (or is down).
///
/// A memory warning, an eviction, an admission refusal, a toggled condition
/// or lane and a removed directory may only make a value unavailable, so they
/// do not change the set. A returned entry's deadline must not be later than
/// the bound of a rule that admits its value. Beyond the composition's
/// answers, every level is probed directly (through its key and value
/// transforms only, bypassing conditions, lanes and pools): what it holds
/// must be admissible too, since a condition or lane turned back on would
/// serve it.
///
/// A failure prints the seed, the composition and the operation log.
/// `STRATA_DIFF_SEEDS` (count), `STRATA_DIFF_FIRST_SEED` and `STRATA_DIFF_OPS`
/// change the run; adaptive levels hash with Swift's per-process seed, so
/// replay a seed with `SWIFT_DETERMINISTIC_HASHING=1` for the same evictions.
@Suite struct DifferentialCompositionTests {
    // MARK: Random numbers

    typealias Generator = SeededGenerator

    // MARK: The origin

    struct OriginDown: Error {}

    /// A read-only origin whose entries (value, optional deadline) the test
    /// sets; it records every answer it gives.
    final class Origin: Fetcher {
        typealias Key = String
        typealias Value = String
        struct Stored: Sendable { var value: String; var deadline: CacheInstant? }
        struct Served: Sendable { var key: String; var stored: Stored; var at: CacheInstant }
        struct State: Sendable {
            var values: [String: Stored] = [:]
            var served: [Served] = []
            var down = false
        }
        let clock: TestClock
        let state = Mutex(State())

        init(clock: TestClock) { self.clock = clock }

        var name: String { "origin" }

        func getIfPresent(_ key: String) async throws -> String? { try await entry(forKey: key)?.value }

        func entry(forKey key: String) async throws -> CacheEntry<String>? {
            enum Answer { case down, miss, hit(Stored) }
            let now = clock.now()
            let answer = state.withLock { state -> Answer in
                if state.down { return .down }
                guard let stored = state.values[key] else { return .miss }
                if let deadline = stored.deadline, now >= deadline { return .miss }
                state.served.append(Served(key: key, stored: stored, at: now))
                return .hit(stored)
            }
            switch answer {
            case .down: throw OriginDown()
            case .miss: return nil
            case .hit(let stored): return CacheEntry(value: stored.value, expiresAt: stored.deadline)
            }
        }

        func current(_ key: String, at now: CacheInstant) -> Stored? {
            state.withLock { state in
                guard let stored = state.values[key] else { return nil }
                if let deadline = stored.deadline, now >= deadline { return nil }
                return stored
            }
        }

        func takeServed() -> [Served] { state.withLock { state in defer { state.served = [] }; return state.served } }
        var isDown: Bool { state.withLock { $0.down } }
    }

    // MARK: Knobs the wrappers read

    /// Conditions and lanes, toggled per key by the operations.
    final class Knobs: Sendable {
        /// "wrapper id|key" pairs a condition turns away.
        let blocked = Mutex<Set<String>>([])
        /// "switch id|key" pairs routed to lane B.
        let laneB = Mutex<Set<String>>([])

        func toggle(_ set: borrowing Mutex<Set<String>>, _ item: String) -> Bool {
            set.withLock { set in
                if set.remove(item) != nil { return false }
                set.insert(item)
                return true
            }
        }
    }

    // MARK: The composition

    typealias Level = any CacheLevel<String, String>

    /// One storing level, as built, with what the model needs of it.
    final class Leaf {
        let name: String
        /// Its own `defaultTTL`, in seconds.
        let defaultTTL: Int?
        /// `expires(at:)` wrappers around it, innermost first, with whether each also holds the origin.
        var expiring: [(seconds: Int, holdsOrigin: Bool)] = []
        /// The level read through its key and value transforms only.
        var probe: Level
        /// Its directory, for a disk level or key-value store.
        let directory: URL?
        /// The level itself.
        let object: AnyObject
        let removeExpired: @Sendable () async -> Int

        init(name: String, defaultTTL: Int?, probe: Level, object: AnyObject, directory: URL?,
             removeExpired: @escaping @Sendable () async -> Int) {
            self.object = object
            self.name = name
            self.defaultTTL = defaultTTL
            self.probe = probe
            self.directory = directory
            self.removeExpired = removeExpired
        }

        /// How long a plain set lives here (`nil`: forever): the outermost `expires(at:)`, else its own TTL.
        var plainTTL: Int? { expiring.last?.seconds ?? defaultTTL }
        /// The longest a back-fill lives here (`nil`: forever).
        var backfillCap: Int? {
            (expiring.filter { !$0.holdsOrigin }.map(\.seconds) + (defaultTTL.map { [$0] } ?? [])).min()
        }
    }

    /// A subtree of the composition being built.
    struct Node {
        var level: Level
        var leaves: [Leaf]
        var holdsOrigin: Bool
        var text: String
    }

    /// The wrappers, each opening the existential it wraps.
    enum Wrap {
        typealias L = CacheLevel<String, String>
        static func conditioned<I: L>(_ inner: I, _ condition: @escaping @Sendable (String) -> Bool) -> Level {
            inner.conditioned { condition($0) }
        }
        static func mapKeys<I: L>(_ inner: I, _ transform: @escaping @Sendable (String) throws -> String) -> Level {
            inner.mapKeys { try transform($0) }
        }
        static func mapValues<I: L>(_ inner: I, _ forward: @escaping @Sendable (String) -> String) -> Level {
            inner.mapValues(forward, inverse: forward)
        }
        static func transformed<I: L>(_ inner: I, _ box: ConditionedTwoWayTransformationBox<String, String, String>) -> Level {
            inner.conditionedValueTransformation(box)
        }
        static func postProcess<I: L>(_ inner: I) -> Level { inner.postProcess { $0 } }
        static func capped<I: L>(_ inner: I, _ limit: Int) -> Level { inner.capRequests(limit) }
        static func instrumented<I: L>(_ inner: I, _ name: String) -> Level { inner.instrumented(name: name) }
        static func concurrent<I: L>(_ inner: I) -> Level { inner.concurrent() }
        static func erased<I: L>(_ inner: I) -> Level { inner.normalize() }
        static func expiring<I: L>(_ inner: I, _ seconds: Int, _ clock: TestClock) -> Level {
            ExpiringCache(inner, expiry: .seconds(Double(seconds)), clock: clock)
        }
        static func pooled<I: L>(_ inner: I, _ clock: TestClock) -> Level { inner.pooled(clock: clock) }
    }

    /// A placeholder while a composition is made again.
    struct Unreadable: Readings {
        func readings(of key: String) async throws -> [CacheReading<String>] { [] }
    }

    /// Values read in the stale-then-fresh order, from the topmost composition.
    protocol Readings: Sendable {
        func readings(of key: String) async throws -> [CacheReading<String>]
    }

    final class Fixture {
        let clock: TestClock
        let origin: Origin
        let knobs: Knobs
        let top: Level
        let composed: any Readings
        let leaves: [Leaf]
        let text: String
        let root: TemporaryDirectory

        init(clock: TestClock, origin: Origin, top: Level, composed: any Readings, leaves: [Leaf], text: String,
             root: TemporaryDirectory, knobs: Knobs) {
            self.knobs = knobs
            self.origin = origin
            self.top = top
            self.composed = composed
            self.leaves = leaves
            self.text = text
            self.root = root
            self.clock = clock
        }
        var conditions: [Int] = []
        var switches: [Int] = []
        /// Whether reads wait for their back-fills (else a back-fill may land after the next writes).
        var waitsAfterReads = true
    }

    static let keys = ["k0", "k1", "k2", "k3", "k4"]

    /// Builds a random composition for `random`.
    struct Builder {
        var random: Generator
        let clock: TestClock
        let knobs: Knobs
        let root: TemporaryDirectory
        var nextID = 0
        var conditions: [Int] = []
        var switches: [Int] = []

        mutating func id() -> Int { nextID += 1; return nextID }

        mutating func leaf(_ index: Int) throws -> Node {
            let ttl: Int? = random.pick([nil, nil, nil, 3, 10])
            let kind = random.int(0..<11)
            let level: Level, name: String, directory: URL?, sweep: @Sendable () async -> Int
            switch kind {
            case 0..<6:
                let policy: EvictionPolicy = kind < 3 ? .lru : .adaptive
                let capacity = random.pick([24, 40, 80, 400])
                let count: Int? = random.pick([nil, nil, 2, 3])
                let memory = MemoryCacheLevel<String, String>(
                    name: "m\(index)", capacity: capacity, countLimit: count, policy: policy,
                    defaultTTL: ttl.map { .seconds($0) }, clock: clock)
                level = memory
                name = "mem\(index).\(policy == .lru ? "lru" : "adaptive")(cap \(capacity)\(count.map { ", count \($0)" } ?? ""))"
                directory = nil
                sweep = { await memory.removeExpired() }
            case 6..<10:
                let policy: EvictionPolicy = kind < 8 ? .lru : .adaptive
                let capacity = random.pick([150, 260, 600, 4000])
                let url = root.url.appendingPathComponent("disk\(index)")
                let disk = try DiskCacheLevel<String, String>(
                    name: "d\(index)", directory: url, capacity: capacity,
                    defaultTTL: ttl.map { .seconds($0) }, policy: policy, clock: clock)
                level = disk
                name = "disk\(index).\(policy == .lru ? "lru" : "adaptive")(cap \(capacity))"
                directory = url
                sweep = { await disk.removeExpired() }
            default:
                let url = root.url.appendingPathComponent("kv\(index)")
                let store = try KeyValueStoreLevel<String, String>(
                    name: "domain", directory: url, defaultTTL: ttl.map { .seconds($0) }, clock: clock)
                level = store
                name = "kv\(index)"
                directory = url
                sweep = { await store.removeExpired() }
            }
            let leaf = Leaf(name: name + (ttl.map { " ttl \($0)s" } ?? ""), defaultTTL: ttl, probe: level, object: level as AnyObject,
                            directory: directory, removeExpired: sweep)
            var node = Node(level: level, leaves: [leaf], holdsOrigin: false, text: leaf.name)
            for _ in 0..<random.pick([0, 0, 1, 1, 2, 3]) { wrap(&node) }
            return node
        }

        /// Wraps `node` in a random wrapper.
        mutating func wrap(_ node: inout Node) {
            let choices = node.holdsOrigin ? [6, 7, 8, 9, 10, 11] : Array(0...11)
            let wrapper = random.pick(choices)
            let inner = node.level
            let wrapperID = id()
            switch wrapper {
            case 0:  // a condition, toggled per key
                let knobs = self.knobs
                node.level = Wrap.conditioned(inner) { key in !knobs.blocked.withLock { $0.contains("\(wrapperID)|\(key)") } }
                node.text = "cond#\(wrapperID)(\(node.text))"
                conditions.append(wrapperID)
            case 1:  // injective key transform that declines one key
                let declined = random.pick(DifferentialCompositionTests.keys + ["-"])
                let transform: @Sendable (String) throws -> String = { key in
                    if key == declined { throw FetchError.valueNotInCache }
                    return "t:" + key
                }
                node.level = Wrap.mapKeys(inner, transform)
                for leaf in node.leaves { leaf.probe = Wrap.mapKeys(leaf.probe, transform) }
                node.text = "mapKeys(decline \(declined))(\(node.text))"
            case 2:  // stored reversed
                let forward: @Sendable (String) -> String = { String($0.reversed()) }
                node.level = Wrap.mapValues(inner, forward)
                for leaf in node.leaves { leaf.probe = Wrap.mapValues(leaf.probe, forward) }
                node.text = "reversed(\(node.text))"
            case 3:  // declines "!" values on the way in, "?" values on the way out
                let box = ConditionedTwoWayTransformationBox<String, String, String>(
                    conditionalTransformClosure: { _, value in
                        if value.hasSuffix("?") { throw FetchError.valueNotInCache }
                        return value
                    },
                    conditionalInverseTransformClosure: { _, value in
                        if value.hasSuffix("!") { throw FetchError.valueNotInCache }
                        return value
                    })
                node.level = Wrap.transformed(inner, box)
                for leaf in node.leaves { leaf.probe = Wrap.transformed(leaf.probe, box) }
                node.text = "declining(\(node.text))"
            case 4:
                node.level = Wrap.postProcess(inner)
                node.text = "postProcess(\(node.text))"
            case 5, 6:
                let seconds = random.pick([2, 5, 20])
                node.level = Self.expiring(inner, seconds: seconds, clock: clock)
                for leaf in node.leaves { leaf.expiring.append((seconds, node.holdsOrigin)) }
                node.text = "expires(\(seconds)s)(\(node.text))"
            case 7:
                node.level = Self.pooled(inner, clock: clock)
                node.text = "pooled(\(node.text))"
            case 8:
                node.level = Wrap.capped(inner, random.pick([1, 2]))
                node.text = "capped(\(node.text))"
            case 9:
                node.level = Wrap.instrumented(inner, "i\(wrapperID)")
                node.text = "instrumented(\(node.text))"
            case 10:
                node.level = Wrap.concurrent(inner)
                node.text = "concurrent(\(node.text))"
            default:
                node.level = Wrap.erased(inner)
                node.text = "erased(\(node.text))"
            }
        }

        static func expiring(_ level: Level, seconds: Int, clock: TestClock) -> Level {
            Wrap.expiring(level, seconds, clock)
        }

        static func pooled(_ level: Level, clock: TestClock) -> Level { Wrap.pooled(level, clock) }

        static func compose(_ upper: Level, _ lower: Level) -> (Level, any Readings) {
            func open<U: CacheLevel<String, String>>(_ upper: U) -> (Level, any Readings) {
                func open<L: CacheLevel<String, String>>(_ lower: L) -> (Level, any Readings) {
                    let composed = upper + lower
                    return (composed, composed)
                }
                return open(lower)
            }
            return open(upper)
        }

        /// A lane switch over two leaves.
        mutating func switchOf(_ a: Node, _ b: Node) -> Node {
            let switchID = id()
            switches.append(switchID)
            let knobs = self.knobs
            func open<A: CacheLevel<String, String>>(_ a: A) -> Level {
                func open<B: CacheLevel<String, String>>(_ b: B) -> Level {
                    switchLevels(cacheA: a, cacheB: b) { key in
                        knobs.laneB.withLock { $0.contains("\(switchID)|\(key)") } ? .cacheB : .cacheA
                    }
                }
                return open(b.level)
            }
            return Node(level: open(a.level), leaves: a.leaves + b.leaves, holdsOrigin: false,
                        text: "switch#\(switchID)(\(a.text) | \(b.text))")
        }

        /// Composes `nodes` (the origin last) in a random tree shape; returns
        /// the tree and its topmost composition.
        mutating func tree(_ nodes: [Node]) -> (Node, any Readings) {
            precondition(nodes.count >= 2)
            let split = random.int(1..<nodes.count)
            let upper = split == 1 ? nodes[0] : tree(Array(nodes[..<split])).0
            let lower = split == nodes.count - 1 ? nodes[split] : tree(Array(nodes[split...])).0
            let (level, readings) = Self.compose(upper.level, lower.level)
            var node = Node(level: level, leaves: upper.leaves + lower.leaves,
                            holdsOrigin: upper.holdsOrigin || lower.holdsOrigin, text: "(\(upper.text) + \(lower.text))")
            if random.chance(0.3) { wrap(&node) }
            return (node, readings)
        }
    }

    /// The composition of `seed`; with `previous`, the same one made again
    /// over the same directories, origin, clock and knobs (a restart).
    struct Shared {
        let clock: TestClock, knobs: Knobs, root: TemporaryDirectory, origin: Origin
    }

    static func makeFixture(seed: UInt64, reusing previous: Shared? = nil) throws -> Fixture {
        let clock = previous?.clock ?? TestClock()
        let knobs = previous?.knobs ?? Knobs()
        let root = previous?.root ?? TemporaryDirectory("strata-diff")
        var builder = Builder(random: Generator(seed: seed), clock: clock, knobs: knobs, root: root)
        let count = builder.random.int(2..<5)
        var nodes: [Node] = []
        var index = 0
        while index < count {
            if index + 1 < count && builder.random.chance(0.15) {
                let a = try builder.leaf(index), b = try builder.leaf(index + 1)
                nodes.append(builder.switchOf(a, b))
                index += 2
            } else {
                nodes.append(try builder.leaf(index))
                index += 1
            }
        }
        let origin = previous?.origin ?? Origin(clock: clock)
        var originNode = Node(level: origin, leaves: [], holdsOrigin: true, text: "origin")
        for _ in 0..<builder.random.pick([0, 1, 1, 2]) { builder.wrap(&originNode) }
        nodes.append(originNode)
        // `values(forKey:)` reads from the topmost composition (a wrapper
        // above it is read through the other paths).
        let (top, composed) = builder.tree(nodes)
        let fixture = Fixture(clock: clock, origin: origin, top: top.level, composed: composed, leaves: top.leaves,
                              text: top.text, root: root, knobs: knobs)
        fixture.conditions = builder.conditions
        fixture.switches = builder.switches
        fixture.waitsAfterReads = builder.random.chance(0.5)
        return fixture
    }
}

extension ComposedCache: DifferentialCompositionTests.Readings where Upper.Key == String, Upper.Value == String {
    func readings(of key: String) async throws -> [CacheReading<String>] {
        var all: [CacheReading<String>] = []
        for try await reading in values(forKey: key) { all.append(reading) }
        return all
    }
}

// MARK: - The model and the run

extension DifferentialCompositionTests {
    /// What a read of each key may answer (see the suite's documentation).
    struct Model {
        struct Bounded: CustomStringConvertible {
            var value: String
            /// Admissible while `now` is before it (`nil`: no bound).
            var bound: CacheInstant?
            var why: String
            func alive(at now: CacheInstant) -> Bool { bound.map { now < $0 } ?? true }
            var description: String { "\(value) (\(why), until \(bound.map { Model.time($0) } ?? "forever"))" }
        }

        var lastSet: [String: Bounded] = [:]
        var served: [String: [Bounded]] = [:]
        /// How long each level keeps a plain set (`nil`: forever).
        let plainTTLs: [Int?]
        /// The longest any level keeps a back-fill (`nil`: forever).
        let backfillCap: Int?

        init(leaves: [Leaf]) {
            plainTTLs = leaves.map(\.plainTTL)
            let caps = leaves.map(\.backfillCap)
            backfillCap = caps.contains { $0 == nil } ? nil : caps.compactMap { $0 }.max()
        }

        static let start = TestClock().now()
        static func time(_ instant: CacheInstant) -> String {
            let ms = (instant.nanosecondsSince1970 - start.nanosecondsSince1970) / 1_000_000
            return "t=\(Double(ms) / 1000)s"
        }

        mutating func set(_ key: String, _ value: String, deadline: CacheInstant?, now: CacheInstant) {
            let bound: CacheInstant?
            if let deadline {
                bound = deadline
            } else if plainTTLs.contains(where: { $0 == nil }) {
                bound = nil
            } else {
                bound = now.advanced(by: .seconds(plainTTLs.compactMap { $0 }.max()!))
            }
            lastSet[key] = Bounded(value: value, bound: bound, why: "set at \(Self.time(now))")
            served[key] = []
        }

        mutating func remove(_ key: String) {
            lastSet[key] = nil
            served[key] = []
        }

        mutating func clear() {
            lastSet = [:]
            served = [:]
        }

        mutating func note(_ answer: Origin.Served) {
            let capped = backfillCap.map { answer.at.advanced(by: .seconds($0)) }
            let bound: CacheInstant? = switch (answer.stored.deadline, capped) {
            case (nil, nil): nil
            case (let d?, nil): d
            case (nil, let c?): c
            case (let d?, let c?): min(d, c)
            }
            served[answer.key, default: []].append(
                Bounded(value: answer.stored.value, bound: bound, why: "origin answered at \(Self.time(answer.at))"))
        }

        /// Every value a read of `key` may answer now.
        func admissible(_ key: String, origin: Origin, now: CacheInstant) -> [Bounded] {
            var all: [Bounded] = []
            if let current = origin.current(key, at: now) {
                all.append(Bounded(value: current.value, bound: current.deadline, why: "origin's current value"))
            }
            if let set = lastSet[key] { all.append(set) }
            all += served[key] ?? []
            return all.filter { $0.alive(at: now) }
        }

        /// Why `answer` (with `deadline` when the read gave one) is not
        /// admissible for `key` now, or `nil` when it is.
        func problem(_ key: String, _ answer: String?, deadline: CacheInstant?? = .none,
                     origin: Origin, now: CacheInstant, missAllowed: Bool = false) -> String? {
            let allowed = admissible(key, origin: origin, now: now)
            guard let answer else {
                DifferentialCompositionTests.tally(missAllowed ? "nothing (probe)" : "a miss")
                if missAllowed || origin.isDown || origin.current(key, at: now) == nil { return nil }
                return "missed although the origin holds \(origin.current(key, at: now)!.value)"
            }
            let matching = allowed.filter { $0.value == answer }
            DifferentialCompositionTests.tally(matching.first.map { $0.why.hasPrefix("set") ? "a set value" : $0.why.hasPrefix("origin's") ? "the origin's current value" : "an earlier origin answer" } ?? "inadmissible")
            if matching.isEmpty {
                return "answered \(answer); admissible now (\(Self.time(now))): \(allowed.isEmpty ? "nothing" : allowed.map(\.description).joined(separator: ", "))"
            }
            if case .some(let stored) = deadline {
                let fits = matching.contains { reason in
                    guard let bound = reason.bound else { return true }
                    guard let stored else { return false }
                    return stored <= bound
                }
                if !fits {
                    return "answered \(answer) with deadline \(stored.map { Self.time($0) } ?? "never"), later than every admissible bound: \(matching.map(\.description).joined(separator: ", "))"
                }
            }
            return nil
        }
    }

    enum ReadPath: CaseIterable { case get, getIfPresent, entry, erased, values, batchGetSome, entries }

    enum Operation: CustomStringConvertible {
        case read(String, ReadPath)
        case set(String, String, ttl: Int?)
        case remove(String)
        case clear
        case memoryWarning
        case advance(milliseconds: Int)
        case origin(String, String?, ttl: Int?)
        case originDown(Bool)
        case toggleCondition(Int, String)
        case toggleLane(Int, String)
        case sweep(Int)
        case removeDirectory(Int)
        case restart

        var description: String {
            switch self {
            case .read(let key, let path): "\(path)(\(key))"
            case .set(let key, let value, let ttl): "set(\(key), \(value)\(ttl.map { ", ttl \($0)s" } ?? ""))"
            case .remove(let key): "remove(\(key))"
            case .clear: "clear()"
            case .memoryWarning: "onMemoryWarning()"
            case .advance(let ms): "clock += \(Double(ms) / 1000)s"
            case .origin(let key, let value, let ttl):
                "origin[\(key)] = \(value ?? "nothing")\(ttl.map { ", deadline in \($0)s" } ?? "")"
            case .originDown(let down): down ? "origin down" : "origin up"
            case .toggleCondition(let id, let key): "toggle cond#\(id) for \(key)"
            case .toggleLane(let id, let key): "toggle switch#\(id) lane for \(key)"
            case .sweep(let leaf): "removeExpired() on leaf \(leaf)"
            case .removeDirectory(let leaf): "delete leaf \(leaf)'s directory"
            case .restart: "restart (the same levels made again over the same directories)"
            }
        }
    }

    static func randomOperation(_ random: inout Generator, _ fixture: Fixture, counter: inout Int) -> Operation {
        let key = random.pick(keys)
        func value(_ prefix: String) -> String {
            counter += 1
            let roll = random.int(0..<20)
            return prefix + "\(counter)" + (roll == 0 ? "!" : roll == 1 ? "?" : roll == 2 ? String(repeating: "x", count: 120) : "")
        }
        let roll = random.int(0..<100)
        switch roll {
        case 0..<2: return .restart
        case 2..<38: return .read(key, random.pick(ReadPath.allCases))
        case 38..<58: return .set(key, value("s"), ttl: random.pick([nil, nil, nil, 0, 1, 2, 5, 30]))
        case 58..<67: return .remove(key)
        case 67..<69: return .clear
        case 69..<72: return .memoryWarning
        case 72..<82: return .advance(milliseconds: random.pick([500, 1000, 1000, 2000, 3000, 5000, 10_000, 20_000]))
        case 82..<89:
            return .origin(key, random.chance(0.2) ? nil : value("o"), ttl: random.pick([nil, nil, 1, 3, 10]))
        case 89..<90: return .originDown(!fixture.origin.isDown)
        case 90..<94 where !fixture.conditions.isEmpty: return .toggleCondition(random.pick(fixture.conditions), key)
        case 90..<94 where !fixture.switches.isEmpty: return .toggleLane(random.pick(fixture.switches), key)
        case 94..<97 where !fixture.switches.isEmpty: return .toggleLane(random.pick(fixture.switches), key)
        case 97..<98: return .sweep(random.int(0..<fixture.leaves.count))
        case 98..<100:
            let withDirectory = fixture.leaves.indices.filter { fixture.leaves[$0].directory != nil }
            if !withDirectory.isEmpty { return .removeDirectory(random.pick(withDirectory)) }
            return .read(key, .get)
        default: return .read(key, random.pick(ReadPath.allCases))
        }
    }

    /// Runs `operation`; returns what it did and, for a read, the problem with its answer.
    static func perform(_ operation: Operation, _ fixture: Fixture, _ model: inout Model) async -> (String, String?) {
        let clock = fixture.clock, origin = fixture.origin
        let top = fixture.waitsAfterReads ? fixture.top : NoWait(inner: fixture.top)
        switch operation {
        case .read(let key, let path):
            do {
                switch path {
                case .get, .getIfPresent, .erased:
                    let answer: String?
                    switch path {
                    case .get:
                        do { answer = try await top.get(key) } catch FetchError.valueNotInCache { answer = nil }
                    case .getIfPresent: answer = try await top.getIfPresent(key)
                    default: answer = try await top.normalize().getIfPresent(key)
                    }
                    await top.waitForPendingWrites()
                    model.noteServed(origin)
                    return ("→ \(answer ?? "miss")", model.problem(key, answer, origin: origin, now: clock.now()))
                case .entry:
                    let entry = try await top.entry(forKey: key)
                    await top.waitForPendingWrites()
                    model.noteServed(origin)
                    let text = entry.map { "\($0.value) until \($0.expiresAt.map { Model.time($0) } ?? "never")" } ?? "miss"
                    return ("→ \(text)", model.problem(key, entry?.value, deadline: .some(entry?.expiresAt), origin: origin, now: clock.now()))
                case .values:
                    var readings: [CacheReading<String>] = []
                    do { readings = try await fixture.composed.readings(of: key) } catch FetchError.valueNotInCache {}
                    await top.waitForPendingWrites()
                    model.noteServed(origin)
                    let text = readings.map { "\($0.value) (\($0.source))" }.joined(separator: ", ")
                    for reading in readings {
                        if let problem = model.problem(key, reading.value, origin: origin, now: clock.now()) {
                            return ("→ \(text)", problem)
                        }
                    }
                    return ("→ \(readings.isEmpty ? "miss" : text)",
                            readings.isEmpty ? model.problem(key, nil, origin: origin, now: clock.now()) : nil)
                case .batchGetSome, .entries:
                    let others = keys.filter { $0 != key }
                    let batch = [key, others[key.count % others.count], others[(key.hashValue & 0xff) % others.count]]
                    var answers: [String: (String, CacheInstant??)] = [:]
                    if path == .batchGetSome {
                        for (k, v) in await top.batchGetSome(batch) { answers[k] = (v, .none) }
                    } else {
                        let found = await top.entries(forKeys: batch, maxConcurrency: 2)
                        for (k, entry) in zip(batch, found) { if let entry { answers[k] = (entry.value, .some(entry.expiresAt)) } }
                    }
                    await top.waitForPendingWrites()
                    model.noteServed(origin)
                    let text = batch.map { "\($0): \(answers[$0]?.0 ?? "miss")" }.joined(separator: ", ")
                    for k in Set(batch) {
                        if let problem = model.problem(k, answers[k]?.0, deadline: answers[k]?.1 ?? .none,
                                                       origin: origin, now: clock.now()) {
                            return ("\(batch) → \(text)", "\(k): \(problem)")
                        }
                    }
                    return ("\(batch) → \(text)", nil)
                }
            } catch {
                await top.waitForPendingWrites()
                model.noteServed(origin)
                return ("→ threw \(error)", origin.isDown ? nil : "threw \(error) with the origin up")
            }
        case .set(let key, let value, let ttl):
            let deadline = ttl.map { clock.now().advanced(by: .seconds($0)) }
            var outcome = "ok"
            do {
                if let deadline { try await top.set(value, forKey: key, expiresAt: deadline) } else { try await top.set(value, forKey: key) }
            } catch {
                outcome = "threw \(error)"
            }
            model.set(key, value, deadline: deadline, now: clock.now())
            await top.waitForPendingWrites()
            return (outcome, nil)
        case .remove(let key):
            var outcome = "ok"
            do { try await top.remove(key) } catch { outcome = "threw \(error)" }
            model.remove(key)
            await top.waitForPendingWrites()
            return (outcome, nil)
        case .clear:
            await top.clear()
            model.clear()
            await top.waitForPendingWrites()
        case .memoryWarning:
            await top.onMemoryWarning()
            await top.waitForPendingWrites()
        case .advance(let ms):
            // Back-fills land before the clock moves: a level's TTL runs from
            // the back-fill, which the model dates at the read.
            await fixture.top.waitForPendingWrites()
            clock.advance(by: .milliseconds(ms))
        case .origin(let key, let value, let ttl):
            let deadline = ttl.map { clock.now().advanced(by: .seconds($0)) }
            origin.state.withLock { $0.values[key] = value.map { Origin.Stored(value: $0, deadline: deadline) } }
        case .originDown(let down):
            origin.state.withLock { $0.down = down }
        case .toggleCondition(let id, let key):
            let on = fixture.knobs.toggle(fixture.knobs.blocked, "\(id)|\(key)")
            return (on ? "now skipped" : "now taking part", nil)
        case .toggleLane(let id, let key):
            let b = fixture.knobs.toggle(fixture.knobs.laneB, "\(id)|\(key)")
            return (b ? "now lane B" : "now lane A", nil)
        case .sweep(let leaf):
            return ("removed \(await fixture.leaves[leaf].removeExpired())", nil)
        case .restart:
            break
        case .removeDirectory(let leaf):
            if let directory = fixture.leaves[leaf].directory { try? FileManager.default.removeItem(at: directory) }
        }
        return ("", nil)
    }

    /// The top level, with `waitForPendingWrites()` returning at once: reads
    /// leave their back-fills in flight, to land among the next operations.
    struct NoWait: CacheLevel {
        typealias Key = String
        typealias Value = String
        let inner: Level
        func getIfPresent(_ key: String) async throws -> String? { try await inner.getIfPresent(key) }
        func entry(forKey key: String) async throws -> CacheEntry<String>? { try await inner.entry(forKey: key) }
        func entries(forKeys keys: [String], maxConcurrency: Int?) async -> [CacheEntry<String>?] {
            await inner.entries(forKeys: keys, maxConcurrency: maxConcurrency)
        }
        func set(_ value: String, forKey key: String) async throws { try await inner.set(value, forKey: key) }
        func set(_ value: String, forKey key: String, expiresAt: CacheInstant?) async throws {
            try await inner.set(value, forKey: key, expiresAt: expiresAt)
        }
        func remove(_ key: String) async throws { try await inner.remove(key) }
        func clear() async { await inner.clear() }
        func onMemoryWarning() async { await inner.onMemoryWarning() }
        func waitForPendingWrites() async {}
    }

    /// Reads every key from every level directly; returns the first inadmissible content.
    static func probeLevels(_ fixture: Fixture, _ model: Model, keys probed: [String]) async -> String? {
        let now = fixture.clock.now()
        for (index, leaf) in fixture.leaves.enumerated() {
            for key in probed {
                let entry: CacheEntry<String>?
                do { entry = try await leaf.probe.entry(forKey: key) } catch { continue }
                guard let entry else { continue }
                if let problem = model.problem(key, entry.value, deadline: .some(entry.expiresAt), origin: fixture.origin,
                                               now: now, missAllowed: true) {
                    return "leaf \(index) \(leaf.name) holds \(key): \(problem)"
                }
            }
        }
        return nil
    }


    /// Runs one seed; returns the failure report, if any. The directories go
    /// once the levels are gone: a level still held (a change report on its
    /// way up) would write into them again.
    static func run(seed: UInt64, operations: Int) async throws -> String? {
        var levels: [Weak] = []
        var root: TemporaryDirectory?
        defer {
            root?.remove()
            if let root { removedRoots.withLock { $0.append(root) } }
        }
        let result = try await exercise(seed: seed, operations: operations, levels: &levels, root: &root)
        // Nothing but the composition holds its levels (they never hold
        // each other through it): they go once the last change report on its
        // way up has been applied.
        let freed = await poll(timeout: .seconds(10)) { levels.allSatisfy { $0.object == nil } }
        #expect(freed, "seed \(seed): a level outlived its composition")
        return result
    }

    static func exercise(seed: UInt64, operations: Int, levels: inout [Weak], root: inout TemporaryDirectory?) async throws -> String? {
        var fixture = try makeFixture(seed: seed)
        root = fixture.root
        levels += fixture.leaves.map { Weak($0.object) }
        var model = Model(leaves: fixture.leaves)
        var random = Generator(seed: seed ^ 0x5EED_0F_0B5)
        var log: [String] = []
        var counter = 0
        func report(_ step: Int, _ problem: String) -> String {
            let leaves = fixture.leaves.enumerated().map { "  leaf \($0.offset): \($0.element.name)" }.joined(separator: "\n")
            return """
                seed \(seed) failed at operation \(step): \(problem)
                composition: \(fixture.text)
                \(leaves)
                operations:
                \(log.map { "  " + $0 }.joined(separator: "\n"))
                """
        }
        for step in 0..<operations {
            let operation = randomOperation(&random, fixture, counter: &counter)
            if case .restart = operation {
                // The process ends (its back-fills done) and starts again
                // over the same directories: memory levels start empty.
                await fixture.top.waitForPendingWrites()
                let shared = Shared(clock: fixture.clock, knobs: fixture.knobs, root: fixture.root, origin: fixture.origin)
                let conditions = fixture.conditions, switches = fixture.switches
                fixture = Fixture(clock: shared.clock, origin: shared.origin, top: shared.origin, composed: Unreadable(),
                                  leaves: [], text: "", root: shared.root, knobs: shared.knobs)
                let previous = levels
                let freed = await poll(timeout: .seconds(10)) { previous.allSatisfy { $0.object == nil } }
                #expect(freed, "seed \(seed): a level outlived its composition across a restart")
                fixture = try makeFixture(seed: seed, reusing: shared)
                precondition(fixture.conditions == conditions && fixture.switches == switches)
                levels += fixture.leaves.map { Weak($0.object) }
            }
            let (text, problem) = await perform(operation, fixture, &model)
            log.append("\(step): \(Model.time(fixture.clock.now())) \(operation) \(text)")
            if let problem { return report(step, problem) }
            let probed: [String]
            switch operation {
            case .read(let key, _), .set(let key, _, _), .remove(let key), .origin(let key, _, _): probed = [key]
            default: probed = keys
            }
            if let problem = await probeLevels(fixture, model, keys: probed) { return report(step, problem) }
        }
        await fixture.top.waitForPendingWrites()
        return nil
    }

    /// Directories of finished seeds: removed once more at the end, in case
    /// a level outlived its seed (a loaded machine) and wrote into one again.
    static let removedRoots = Mutex<[TemporaryDirectory]>([])
    static let tallies = Mutex<[String: Int]>([:])
    static func tally(_ what: String) { tallies.withLock { $0[what, default: 0] += 1 } }

    static func environment(_ name: String) -> Int? { ProcessInfo.processInfo.environment[name].flatMap { Int($0) } }

    @Test func randomCompositionsAnswerLikeTheModel() async throws {
        let seeds = Self.environment("STRATA_DIFF_SEEDS") ?? 100
        let first = Self.environment("STRATA_DIFF_FIRST_SEED") ?? 1
        let operations = Self.environment("STRATA_DIFF_OPS") ?? 60
        var failures: [String] = []
        let started = ContinuousClock.now
        for seed in first..<(first + seeds) {
            if let failure = try await Self.run(seed: UInt64(seed), operations: operations) {
                failures.append(failure)
                if failures.count >= 3 { break }
            }
        }
        print("differential: \(seeds) seeds × \(operations) operations in \(ContinuousClock.now - started), \(failures.count) failing")
        print("answers (reads and probes): " + Self.tallies.withLock { $0 }.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))
        for failure in failures { Issue.record(Comment(rawValue: failure)) }
        for root in Self.removedRoots.withLock({ $0 }) { root.remove() }
    }
}

extension DifferentialCompositionTests.Model {
    mutating func noteServed(_ origin: DifferentialCompositionTests.Origin) {
        for answer in origin.takeServed() { note(answer) }
    }
}

// MARK: - Concurrent

extension DifferentialCompositionTests {
    /// A key's last completed write: what, and when it started (on ``Ticks``).
    struct LastWrite: Sendable {
        enum Kind: Sendable { case none, set(String, deadline: CacheInstant?), removed }
        var kind = Kind.none
        var started = 0
    }

    /// A shared counter that orders events of different tasks.
    final class Ticks: Sendable {
        private let value = Mutex(0)
        func next() -> Int { value.withLock { $0 += 1; return $0 } }
        func set(_ tick: Int) { value.withLock { $0 = tick } }
        func decrement() { value.withLock { $0 -= 1 } }
        var current: Int { value.withLock { $0 } }
    }

    /// A composition of two storing levels over a fixed origin, and direct reads of each level.
    struct Pair: Sendable {
        let cache: Level
        let upper: @Sendable (String) async throws -> String?
        let lower: @Sendable (String) async throws -> String?
        /// Whether a memory warning empties the lower level too.
        let warningClearsLower: Bool
        let text: String
    }

    static func pair(_ kind: Int, seed: UInt64, clock: TestClock, root: TemporaryDirectory) throws -> Pair {
        var random = Generator(seed: seed)
        let origin = BasicFetcher<String, String>(name: "origin") { "o-\($0)" }
        let upper = MemoryCacheLevel<String, String>(name: "upper", capacity: 1 << 20,
                                                     policy: random.chance(0.5) ? .lru : .adaptive, clock: clock)
        let originLevel: Level = random.chance(0.5) ? origin.pooled(clock: clock) : origin
        let nested = random.chance(0.5)
        func build<Lower: CacheLevel<String, String>>(_ lower: Lower, _ text: String, warningClearsLower: Bool) -> Pair {
            func open<O: CacheLevel<String, String>>(_ origin: O) -> Level {
                nested ? (upper + (lower + origin)) : ((upper + lower) + origin)
            }
            return Pair(cache: open(originLevel), upper: { try await upper.getIfPresent($0) },
                        lower: { try await lower.getIfPresent($0) }, warningClearsLower: warningClearsLower,
                        text: "\(nested ? "upper + (\(text) + origin)" : "(upper + \(text)) + origin"), upper \(upper.policy)")
        }
        if kind == 0 {
            let lower = MemoryCacheLevel<String, String>(name: "lower", capacity: 1 << 20,
                                                         policy: random.chance(0.5) ? .lru : .adaptive, clock: clock)
            return build(lower, "memory.\(lower.policy)", warningClearsLower: true)
        }
        let lower = try DiskCacheLevel<String, String>(name: "lower", directory: root.url.appendingPathComponent("disk"),
                                                       capacity: 1 << 20, policy: random.chance(0.5) ? .lru : .adaptive,
                                                       clock: clock)
        return build(lower, "disk.\(lower.policy)", warningClearsLower: false)
    }

    /// Writers (one task per key, so each key's writes are serialised: sets,
    /// some with a TTL, and removes) race readers of every key (whose
    /// back-fills race the writes) and a task that advances the clock and now
    /// and then clears the composition or sends it a memory warning. Once
    /// every task has finished and the back-fills have settled, every level
    /// agrees with each key's last completed write:
    ///
    /// - after a set of `v` still alive, the lower level holds `v` and the
    ///   upper `v` or nothing, and a get answers `v`; unless a clear (or a
    ///   memory warning reaching that level) ended after the set began: then
    ///   that level may also hold nothing or the origin's value;
    /// - after a remove, no write, or a set that has expired, each level
    ///   holds nothing or the origin's value, and a get answers the origin's.
    ///
    /// No level ever holds a value that is not the key's last set.
    @Test(arguments: [0, 1]) func concurrentWritersAndReadersLeaveEveryLevelWithTheLastWrite(kind: Int) async throws {
        let rounds = Self.environment("STRATA_DIFF_ROUNDS") ?? 12
        let keys = (0..<6).map { "c\($0)" }
        for round in 0..<rounds {
            let root = TemporaryDirectory("strata-diff-concurrent")
            defer { root.remove() }
            let seed = UInt64(round * 2 + kind)
            let clock = TestClock()
            let pair = try Self.pair(kind, seed: seed, clock: clock, root: root)
            let cache = pair.cache
            let ticks = Ticks()
            /// Writers still writing: readers and the clock go on until they are done.
            let writing = Ticks()
            writing.set(keys.count)
            /// When the last clear of each level ended (0: never).
            let clearedUpper = Ticks(), clearedLower = Ticks()
            let lastWrites = try await withThrowingTaskGroup(of: (String, LastWrite).self) { group in
                for (index, key) in keys.enumerated() {
                    group.addTask {
                        var random = Generator(seed: seed &* 31 &+ UInt64(index))
                        var last = LastWrite()
                        for step in 0..<40 {
                            switch random.int(0..<10) {
                            case 0..<4:
                                let value = "\(key)-v\(step)"
                                let deadline = random.chance(0.3) ? clock.now().advanced(by: .seconds(random.int(1..<4))) : nil
                                let started = ticks.next()
                                try await cache.set(value, forKey: key, expiresAt: deadline)
                                last = LastWrite(kind: .set(value, deadline: deadline), started: started)
                            case 4..<6:
                                let started = ticks.next()
                                try await cache.remove(key)
                                last = LastWrite(kind: .removed, started: started)
                            default:
                                _ = try await cache.getIfPresent(key)
                            }
                            if random.chance(0.3) { await Task.yield() }
                        }
                        writing.decrement()
                        return (key, last)
                    }
                }
                for reader in 0..<2 {
                    group.addTask {
                        var random = Generator(seed: seed &* 77 &+ UInt64(reader))
                        var reads = 0
                        while writing.current > 0 && reads < 20_000 {
                            reads += 1
                            let key = random.pick(keys)
                            switch random.int(0..<3) {
                            case 0: _ = try await cache.getIfPresent(key)
                            case 1: _ = await cache.batchGetSome([key, random.pick(keys)])
                            default: _ = try await cache.entry(forKey: key)
                            }
                            if random.chance(0.5) { await Task.yield() }
                        }
                        return ("", LastWrite())
                    }
                }
                group.addTask {
                    var random = Generator(seed: seed &* 13)
                    var steps = 0
                    while writing.current > 0 && steps < 2_000 {
                        steps += 1
                        switch random.int(0..<40) {
                        case 0:
                            await cache.clear()
                            let ended = ticks.next()
                            clearedUpper.set(ended)
                            clearedLower.set(ended)
                        case 1:
                            await cache.onMemoryWarning()
                            let ended = ticks.next()
                            clearedUpper.set(ended)
                            if pair.warningClearsLower { clearedLower.set(ended) }
                        default:
                            clock.advance(by: .milliseconds(250))
                        }
                        for _ in 0..<random.int(1..<20) { await Task.yield() }
                    }
                    return ("", LastWrite())
                }
                var all: [String: LastWrite] = [:]
                for try await (key, last) in group where !key.isEmpty { all[key] = last }
                return all
            }
            await cache.waitForPendingWrites()
            let now = clock.now()
            let upperCleared = clearedUpper.current, lowerCleared = clearedLower.current
            for key in keys {
                let last = lastWrites[key] ?? LastWrite()
                let upper = try await pair.upper(key), lower = try await pair.lower(key)
                let context = "round \(round) (seed \(seed)), \(pair.text), \(key): last write \(last.kind) at tick \(last.started), cleared at ticks \(upperCleared)/\(lowerCleared), now \(Model.time(now)), upper \(upper ?? "nothing"), lower \(lower ?? "nothing")"
                let fromOrigin = "o-\(key)"
                if case .set(let value, let deadline) = last.kind, deadline.map({ now < $0 }) ?? true {
                    let lowerMayLack = lowerCleared > last.started, upperMayLack = upperCleared > last.started
                    #expect(lower == value || (lowerMayLack && (lower == nil || lower == fromOrigin)), "\(context)")
                    #expect(upper == nil || upper == value || (upperMayLack && upper == fromOrigin), "\(context)")
                    let answer = try await cache.getIfPresent(key)
                    #expect(answer == value || (lowerMayLack && upperMayLack && answer == fromOrigin), "get answered \(answer ?? "nothing"); \(context)")
                } else {
                    #expect(lower == nil || lower == fromOrigin, "\(context)")
                    #expect(upper == nil || upper == fromOrigin, "\(context)")
                    #expect(try await cache.getIfPresent(key) == fromOrigin, "\(context)")
                }
            }
            await cache.waitForPendingWrites()
        }
    }
}

// MARK: - Found by the differential run

extension DifferentialCompositionTests {
    /// Found while checking the differential run's hit counts (speed, not
    /// rule 1). In `memory + (disk + origin)` the inner composition's
    /// back-fill into the disk level is a write made outside the outer
    /// composition's, so the disk level reports it and the outer composition
    /// drops the key from memory, together with its own back-fill of the
    /// origin's answer: memory never keeps a value on its first read from the
    /// origin; only a second read (a disk hit) fills it. `(memory + disk) +
    /// origin` keeps it.
    ///
    /// Tried and reverted: running a back-fill as the write of the
    /// compositions whose read of that key it answers (a task-local set
    /// around the lower read), so that they skip its report. It passed this
    /// test and broke rule 1 with Redis: in `memory + (redis + origin)` the
    /// inner back-fill is a `SET NX` (or declined for a remove it saw), so it
    /// may not land, and its report is what made the outer composition drop
    /// the origin's answer it had put in memory; skipping it left memory
    /// serving that answer after another process's remove
    /// (`RedisDifferentialTests`, 3 of 16 seeds). A fix must skip only the
    /// report of a back-fill that landed, with the value the outer
    /// composition holds. (Also: a `TaskLocal.withValue` around the read costs
    /// an executor hop per miss, `ExecutorTests`.)
    /// `memory + (disk + origin)`, the origin answering `o-<key>`.
    static func memoryOverNestedDisk(in root: TemporaryDirectory) throws -> (
        MemoryCacheLevel<String, String>, DiskCacheLevel<String, String>,
        ComposedCache<DiskCacheLevel<String, String>, BasicFetcher<String, String>>,
        ComposedCache<MemoryCacheLevel<String, String>, ComposedCache<DiskCacheLevel<String, String>, BasicFetcher<String, String>>>
    ) {
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let disk = try DiskCacheLevel<String, String>(directory: root.url, capacity: 1 << 20)
        let inner = disk + BasicFetcher<String, String> { "o-\($0)" }
        return (memory, disk, inner, memory + inner)
    }

    @Test(arguments: ["get", "batch"])
    func aFirstReadFromTheOriginStaysInMemoryOverANestedDiskComposition(_ read: String) async throws {
        let root = TemporaryDirectory("strata-diff-echo")
        defer { root.remove() }
        let (memory, disk, _, cache) = try Self.memoryOverNestedDisk(in: root)
        if read == "get" {
            #expect(try await cache.get("k") == "o-k")
        } else {
            #expect(await cache.entries(forKeys: ["k"], maxConcurrency: nil).map { $0?.value } == ["o-k"])
        }
        await cache.waitForPendingWrites()
        #expect(disk.count == 1)
        // The report, if any, is delivered in a task of its own: wait for it (bounded).
        _ = await poll(timeout: .seconds(2)) { cache.invalidationsApplied > 0 }
        await cache.waitForPendingWrites()
        withKnownIssue("the disk level reports the inner composition's back-fill; the outer one drops it from memory") {
            #expect(cache.invalidationsApplied == 0)
            #expect(memory.value(forKey: "k") == "o-k")
        }
    }

    /// The other side of the test above: a back-fill made by a read that is
    /// not the outer composition's (the inner composition asked directly)
    /// is a change to the outer one, which drops what its memory held.
    @Test func aBackfillByAReadOfTheInnerCompositionAloneIsReportedToTheOuterOne() async throws {
        let root = TemporaryDirectory("strata-diff-echo")
        defer { root.remove() }
        let (memory, _, inner, cache) = try Self.memoryOverNestedDisk(in: root)
        try await memory.set("m", forKey: "k")
        #expect(try await inner.get("k") == "o-k")
        await inner.waitForPendingWrites()
        #expect(await poll(timeout: .seconds(30)) { memory.value(forKey: "k") == nil }, "the outer composition dropped k")
        #expect(cache.invalidationsApplied == 1)
        #expect(try await cache.get("k") == "o-k")
    }
}
