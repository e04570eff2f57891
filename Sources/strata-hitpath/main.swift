// strata-hitpath: N warm get-hits of one kind, for instruction counting under
// `valgrind --tool=callgrind` (see scripts/callgrind-guard.sh).
// Usage: strata-hitpath KIND ITERATIONS
import Foundation
import Strata
import Synchronization

/// Reaches a level through an unspecialised generic function, as code in
/// another module that takes `some CacheLevel` without inlining would.
@_semantics("optimize.sil.specialize.generic.never")
@inline(never)
func genericGet<L: CacheLevel>(_ level: L, _ key: L.Key) async throws -> L.Value? {
    try await level.getIfPresent(key)
}

/// The same through ``CacheLevel/get(_:)``: an unspecialised async body
/// keeps every `Value` temporary on the task allocator.
@_semantics("optimize.sil.specialize.generic.never")
@inline(never)
func genericThrowingGet<L: CacheLevel>(_ level: L, _ key: L.Key) async throws -> L.Value {
    try await level.get(key)
}

/// The same generic function, left for the optimiser to specialise: the
/// baseline for `generic`, since both pay for the caller's own async frame.
@inline(never)
func specialisedGet<L: CacheLevel>(_ level: L, _ key: L.Key) async throws -> L.Value? {
    try await level.getIfPresent(key)
}

/// The floor: a locked dictionary behind an async throwing function.
final class Floor: Sendable {
    let storage = Mutex<[String: Data]>([:])
    @inline(never) func get(_ key: String) async throws -> Data? { storage.withLock { $0[key] } }
}

@inline(never) func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

/// Hides the concrete type from the loop that uses the existential.
@inline(never)
func erase(_ level: MemoryCacheLevel<String, Data>) -> any CacheLevel<String, Data> { level }

/// Hides a composition's concrete type the same way.
@inline(never)
func eraseComposed<L: CacheLevel<String, Data>>(_ level: L) -> any CacheLevel<String, Data> { level }

let arguments = CommandLine.arguments
guard arguments.count == 3, let iterations = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: strata-hitpath KIND ITERATIONS\n".utf8))
    exit(2)
}
guard await run(kind: arguments[1], iterations: iterations) else {
    FileHandle.standardError.write(Data("strata-hitpath: unknown kind \(arguments[1])\n".utf8))
    exit(2)
}

/// The loop runs on the main task: valgrind 3.19 crashes when the Swift
/// concurrency runtime starts its worker threads, so nothing here may hop to
/// the global executor (the timing benchmark measures non-isolated tasks).
func run(kind: String, iterations: Int) async -> Bool {
    let keys = (0..<1024).map { "user:\($0 * 7919)" }
    let values = (0..<1024).map { Data(repeating: UInt8(truncatingIfNeeded: $0), count: 64) }
    let mask = keys.count - 1
    func filled(policy: EvictionPolicy = .lru) -> MemoryCacheLevel<String, Data> {
        let level = MemoryCacheLevel<String, Data>(capacity: 1 << 30, policy: policy)
        for (key, value) in zip(keys, values) { try? level.store(value, forKey: key) }
        return level
    }
    let memory = filled()

    switch kind {
    case "floor":
        let floor = Floor()
        for (key, value) in zip(keys, values) { floor.storage.withLock { $0[key] = value } }
        for i in 0..<iterations { blackHole(try? await floor.get(keys[i & mask])) }
    case "concrete":
        for i in 0..<iterations { blackHole(try? await memory.get(keys[i & mask])) }
    case "set-replace":
        for i in 0..<iterations { try? memory.store(values[i & mask], forKey: keys[i & mask]) }
    case "set-evict", "set-evict-adaptive":
        // Room for a quarter of the keys: every set of the cycle evicts.
        let small = MemoryCacheLevel<String, Data>(capacity: 256 * 64, policy: kind == "set-evict" ? .lru : .adaptive)
        for i in 0..<iterations { try? small.store(values[i & mask], forKey: keys[i & mask]) }
        blackHole(small.evictions)
    case "adaptive":
        let adaptive = filled(policy: .adaptive)
        for i in 0..<iterations { blackHole(try? await adaptive.get(keys[i & mask])) }
    case "normalize":
        let erased = memory.normalize()
        for i in 0..<iterations { blackHole(try? await erased.get(keys[i & mask])) }
    case "existential":
        let erased = erase(memory)
        for i in 0..<iterations { blackHole(try? await erased.get(keys[i & mask])) }
    case "generic":
        for i in 0..<iterations { blackHole(try? await genericGet(memory, keys[i & mask])) }
    case "generic-specialised":
        for i in 0..<iterations { blackHole(try? await specialisedGet(memory, keys[i & mask])) }
    case "generic-get":
        for i in 0..<iterations { blackHole(try? await genericThrowingGet(memory, keys[i & mask])) }
    case "existential-composed":
        let cache = eraseComposed(memory + filled() + filled())
        for i in 0..<iterations { blackHole(try? await cache.get(keys[i & mask])) }
    case "instrumented":
        let level = memory.instrumented(name: "L1")
        for i in 0..<iterations { blackHole(try? await level.get(keys[i & mask])) }
    case "composed":
        let cache = memory + filled() + filled()
        for i in 0..<iterations { blackHole(try? await cache.get(keys[i & mask])) }
    case "compose-per-request":
        // A composition built for each request over long-lived levels, and
        // asked for a hit (its construction: closures, link, back-fill
        // tracker, shared write order, two listener registrations).
        let shared = filled()
        for i in 0..<iterations { blackHole((memory + shared).synchronousValue(forKey: keys[i & mask])) }
    case "load-hit", "load-hit-instrumented", "load-hit-refresh-ahead":
        // A loading get (`get(_:ttl:load:)`) that hits the upper level of a
        // three-level stack (instrumented: `memory.instrumented(name:)` on
        // top, as a server would): the loader is never called.
        let load: @Sendable (String) async throws -> Data = { _ in Data() }
        if kind == "load-hit" {
            let cache = memory + filled() + filled()
            for i in 0..<iterations { blackHole(try? await cache.get(keys[i & mask], ttl: .seconds(60), load: load)) }
        } else if kind == "load-hit-refresh-ahead" {
            let cache = (memory + filled() + filled()).refreshAhead(at: 0.8)
            for i in 0..<iterations { blackHole(try? await cache.get(keys[i & mask], ttl: .seconds(60), load: load)) }
        } else {
            let cache = memory.instrumented(name: "L1") + filled() + filled()
            for i in 0..<iterations { blackHole(try? await cache.get(keys[i & mask], ttl: .seconds(60), load: load)) }
        }
    case "composed-erased":
        let cache = (memory + filled() + filled()).normalize()
        for i in 0..<iterations { blackHole(try? await cache.get(keys[i & mask])) }
    default:
        return false
    }
    return true
}
