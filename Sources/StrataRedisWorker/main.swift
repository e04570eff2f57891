// strata-redis-worker URL PREFIX: one process of the near-cache tests, with
// `memory + redis` on the given server and prefix. Prints `ready` once it
// receives invalidations, then `invalidated KEY NANOS` (wall clock) for each
// key Redis reports changed, and `flush NANOS` for each flush. Reads commands
// from stdin, one per line: `get KEY` prints `value KEY VALUE` (or `miss KEY`)
// and `upper KEY` the same for its memory level alone; `remove KEY` removes
// KEY through `memory + redis` and prints `done remove KEY`; `load KEY MS` and
// `dload KEY MS` get KEY through a loader that takes MS milliseconds and
// counts its calls in Redis (`INCR strata-test-loads:KEY`), the second
// behind the distributed lock (`distributedLoad`); `quit` exits.
//
// strata-redis-worker --hold-server: starts a test RedisServer, prints
// `server PID PORT` and waits for stdin to close (the tests of RedisServer's
// lifetime SIGKILL it meanwhile).
import Foundation
import Strata
import StrataRedis
import StrataTestSupport

let arguments = CommandLine.arguments
if arguments.count == 2, arguments[1] == "--hold-server" {
    let server = try await RedisServer()
    FileHandle.standardOutput.write(Data("server \(server.process.processIdentifier) \(server.port)\n".utf8))
    while readLine() != nil {}
    await server.kill()
    exit(0)
}
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: strata-redis-worker URL PREFIX\n".utf8))
    exit(2)
}

/// Output and clock, as an enum so the invalidation listener can use them.
enum Out {
    static func now() -> Int64 { SystemClock().now().nanosecondsSince1970 }
    /// One line per `write(2)` (shorter than PIPE_BUF, so lines never interleave).
    static func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
}

let redis = try RedisCacheLevel<String, String>(url: arguments[1], prefix: arguments[2])
let memory = MemoryCacheLevel<String, String>(capacity: 1 << 24)
let cache = memory + redis
let subscription = redis.subscribe { change in
    switch change.invalidation {
    case .key(let key): Out.say("invalidated \(key) \(Out.now())")
    case .all, .contactLost: Out.say("flush \(Out.now())")
    }
}
while !redis.isReceivingInvalidations { try await Task.sleep(for: .milliseconds(2)) }
Out.say("ready")
while let line = readLine() {
    let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
    switch (parts.first, parts.count) {
    case ("get", 2):
        let value = try? await cache.getIfPresent(parts[1])
        await cache.waitForPendingWrites()
        Out.say(value.flatMap { $0 }.map { "value \(parts[1]) \($0)" } ?? "miss \(parts[1])")
    case ("load", 2), ("dload", 2):
        let words = parts[1].split(separator: " ").map(String.init)
        guard words.count == 2, let milliseconds = Int(words[1]) else { Out.say("error \(line)"); continue }
        let key = words[0]
        let loader: @Sendable (String) async throws -> String = { key in
            _ = try await redis.client.send("INCR", "strata-test-loads:\(key)")
            try await Task.sleep(for: .milliseconds(milliseconds))
            return "loaded by \(ProcessInfo.processInfo.processIdentifier)"
        }
        let load = parts[0] == "dload" ? redis.distributedLoad(ttl: .seconds(60), loader) : loader
        do {
            Out.say("value \(key) \(try await cache.get(key, ttl: .seconds(60), load: load))")
        } catch {
            Out.say("error \(line): \(error)")
        }
    case ("remove", 2):
        do {
            try await cache.remove(parts[1])
            Out.say("done remove \(parts[1])")
        } catch {
            Out.say("error \(line): \(error)")
        }
    case ("upper", 2):
        let value = try? await memory.getIfPresent(parts[1])
        Out.say(value.flatMap { $0 }.map { "value \(parts[1]) \($0)" } ?? "miss \(parts[1])")
    case ("quit", _):
        await redis.shutdown()
        exit(0)
    default:
        Out.say("error \(line)")
    }
}
await redis.shutdown()
