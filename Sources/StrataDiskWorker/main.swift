// strata-disk-worker DIR WORKER ROUNDS: one of several processes hammering one
// disk cache directory (used by the tests). Every value is derived from its
// key, so any torn or mixed-up entry is detected. Exits 1 on a wrong value.
import Foundation
import Strata

let arguments = CommandLine.arguments
// strata-disk-worker DIR set KEY VALUE | DIR remove KEY: one write, as another process.
if arguments.count >= 4, ["set", "remove"].contains(arguments[2]) {
    let level = try DiskCacheLevel<String, Data>(directory: URL(fileURLWithPath: arguments[1]), capacity: 400_000)
    if arguments[2] == "set", arguments.count == 5 {
        try await level.set(Data(arguments[4].utf8), forKey: arguments[3])
    } else {
        try await level.remove(arguments[3])
    }
    exit(0)
}
// strata-disk-worker DIR kv-remove DOMAIN KEY: removes KEY from the key-value
// store domain DOMAIN in DIR, as another process.
if arguments.count == 5, arguments[2] == "kv-remove" {
    let level = try KeyValueStoreLevel<String, Data>(name: arguments[3], directory: URL(fileURLWithPath: arguments[1]))
    try await level.remove(arguments[4])
    exit(0)
}
// strata-disk-worker DIR serve: `memory + disk` (String values) on DIR, as
// another process of the differential tests. Prints `ready`, then reads
// commands from stdin, one per line, each answered by one line:
// `get KEY` (`value KEY VALUE` or `miss KEY`, once its back-fills landed),
// `load KEY VALUE` (a loading get whose loader answers VALUE: `value KEY V`),
// `set KEY VALUE`, `remove KEY`, `clear` (`done`), `quit`; a failure
// answers `error …`.
if arguments.count == 3, arguments[2] == "serve" {
    let disk = try DiskCacheLevel<String, String>(directory: URL(fileURLWithPath: arguments[1]), capacity: 1 << 20)
    let stack = MemoryCacheLevel<String, String>(capacity: 1 << 20) + disk
    let say = { (line: String) in FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
    say("ready")
    while let line = readLine() {
        let words = line.split(separator: " ").map(String.init)
        do {
            switch (words.first, words.count) {
            case ("get", 2):
                let value = try await stack.getIfPresent(words[1])
                await stack.waitForPendingWrites()
                say(value.map { "value \(words[1]) \($0)" } ?? "miss \(words[1])")
            case ("load", 3):
                let value = try await stack.get(words[1], ttl: .seconds(60)) { _ in words[2] }
                await stack.waitForPendingWrites()
                say("value \(words[1]) \(value)")
            case ("set", 3): try await stack.set(words[2], forKey: words[1]); say("done")
            case ("remove", 2): try await stack.remove(words[1]); say("done")
            case ("clear", 1): await stack.clear(); say("done")
            case ("quit", 1): exit(0)
            default: say("error unknown command: \(line)")
            }
        } catch {
            say("error \(line): \(error)")
        }
    }
    exit(0)
}
// strata-disk-worker UPPER stacked LOWER KEY VALUE: sets KEY through `upper +
// lower` (two disk levels), prints "ready" and waits to be killed (kill -9: no
// deinit runs).
if arguments.count == 6, arguments[2] == "stacked" {
    let upper = try DiskCacheLevel<String, Data>(name: "upper", directory: URL(fileURLWithPath: arguments[1]), capacity: 400_000)
    let lower = try DiskCacheLevel<String, Data>(name: "lower", directory: URL(fileURLWithPath: arguments[3]), capacity: 400_000)
    let stack = upper + lower
    try await stack.set(Data(arguments[5].utf8), forKey: arguments[4])
    FileHandle.standardOutput.write(Data("ready\n".utf8))
    while true { try await Task.sleep(for: .seconds(3600)) }
}
guard arguments.count == 4, let worker = Int(arguments[2]), let rounds = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: strata-disk-worker DIR WORKER ROUNDS\n".utf8))
    exit(2)
}

func expected(_ key: String) -> Data { Data(String(repeating: key + ";", count: 1 + key.count % 40).utf8) }

let level = try DiskCacheLevel<String, Data>(directory: URL(fileURLWithPath: arguments[1]), capacity: 400_000)
var wrong = 0
for round in 0..<rounds {
    let shared = "shared-\(round % 64)"
    let own = "worker\(worker)-\(round % 97)"
    try await level.set(expected(shared), forKey: shared)
    try await level.set(expected(own), forKey: own)
    for key in ["shared-\((round * 7) % 64)", "worker\(1 - worker)-\(round % 97)", own] {
        if let value = try await level.getIfPresent(key), value != expected(key) {
            wrong += 1
            FileHandle.standardError.write(Data("wrong value for \(key)\n".utf8))
        }
    }
    if round % 50 == 0 { try await level.remove("shared-\((round / 50) % 64)") }
}
print("worker \(worker): \(rounds) rounds, \(wrong) wrong, \(level.corruptEntriesRemoved) corrupt")
exit(wrong == 0 && level.corruptEntriesRemoved == 0 ? 0 : 1)
