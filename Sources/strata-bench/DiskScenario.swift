import Foundation
import Strata
#if canImport(Glibc)
import Glibc
#endif

/// Disk get and set of 4 KiB values next to a raw `read(2)` of a 4 KiB file
/// and a raw atomic write (temporary file + `rename(2)`), same directory, same run.
struct DiskScenario {
    let report: Report
    let options: BenchOptions

    func run() async throws {
        guard options.wants("disk") else { return }
        let root = NSTemporaryDirectory() + "strata-bench-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let raw = root + "/raw"
        try FileManager.default.createDirectory(atPath: raw, withIntermediateDirectories: true)
        let level = try DiskCacheLevel<String, Data>(directory: URL(fileURLWithPath: root + "/level"), capacity: 1 << 30)
        let adaptive = try DiskCacheLevel<String, Data>(directory: URL(fileURLWithPath: root + "/adaptive"),
                                                        capacity: 1 << 30, policy: .adaptive)
        // Full levels of 64 entries: every set of a new key evicts one.
        let entry = 56 + 5 + 12 + 4096
        let smallLRU = try DiskCacheLevel<String, Data>(directory: URL(fileURLWithPath: root + "/small-lru"),
                                                        capacity: 64 * entry)
        let smallAdaptive = try DiskCacheLevel<String, Data>(directory: URL(fileURLWithPath: root + "/small-adaptive"),
                                                             capacity: 64 * entry, policy: .adaptive)
        let keys = (0..<256).map { "item:\($0)" }
        let value = Data(repeating: 0x5A, count: 4096)
        for key in keys {
            try await level.set(value, forKey: key)
            try await adaptive.set(value, forKey: key)
            _ = FileManager.default.createFile(atPath: raw + "/" + key, contents: value)
        }
        let ops = max(2_000, options.opsPerRun / 100)

        var rawReads: [Double] = [], levelReads: [Double] = []
        var rawWrites: [Double] = [], levelWrites: [Double] = []
        var adaptiveReads: [Double] = [], lruEvicting: [Double] = [], adaptiveEvicting: [Double] = []
        var rawUnlinks: [Double] = [], levelRemoves: [Double] = []
        var fresh = 0
        var buffer = [UInt8](repeating: 0, count: 4097)
        for _ in 0..<options.runs {
            rawReads.append(timeOps(ops) { i in
                let fd = open(raw + "/" + keys[i % keys.count], O_RDONLY)
                _ = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, 4097) }
                close(fd)
            })
            levelReads.append(await timeOpsAsync(ops) { i in
                blackHole(try? await level.get(keys[i % keys.count]))
            })
            adaptiveReads.append(await timeOpsAsync(ops) { i in
                blackHole(try? await adaptive.get(keys[i % keys.count]))
            })
            let first = fresh
            lruEvicting.append(await timeOpsAsync(ops / 4) { i in
                try? await smallLRU.set(value, forKey: "new:\(String(first + i + 1_000_000).suffix(7))")
            })
            adaptiveEvicting.append(await timeOpsAsync(ops / 4) { i in
                try? await smallAdaptive.set(value, forKey: "new:\(String(first + i + 1_000_000).suffix(7))")
            })
            fresh += ops / 4
            rawWrites.append(timeOps(ops / 4) { i in
                let temp = raw + "/.tmp-\(i)"
                let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                _ = value.withUnsafeBytes { write(fd, $0.baseAddress!, 4096) }
                close(fd)
                rename(temp, raw + "/" + keys[i % keys.count])
            })
            levelWrites.append(await timeOpsAsync(ops / 4) { i in
                try? await level.set(value, forKey: keys[i % keys.count])
            })
            // A remove of a key the level does not hold: its tombstone, the
            // exclusive delete lock and the unlink that finds nothing.
            rawUnlinks.append(timeOps(ops / 4) { i in unlink(raw + "/absent-\(i % 512)") })
            levelRemoves.append(await timeOpsAsync(ops / 4) { i in
                try? await level.remove("absent-\(i % 512)")
            })
        }
        let readBase = report.row("baseline raw read(2) of a 4 KiB file", threads: 1, samples: rawReads)
        report.add(readBase)
        let levelRead = report.row("DiskCacheLevel get, 4 KiB hit", threads: 1, samples: levelReads, baseline: readBase)
        report.add(levelRead)
        report.add(report.row("DiskCacheLevel .adaptive get, 4 KiB hit", threads: 1, samples: adaptiveReads, baseline: levelRead))
        let writeBase = report.row("baseline raw write + rename, 4 KiB", threads: 1, samples: rawWrites)
        report.add(writeBase)
        report.add(report.row("DiskCacheLevel set, 4 KiB", threads: 1, samples: levelWrites, baseline: writeBase))
        let lruRow = report.row("DiskCacheLevel set, 4 KiB, evicting", threads: 1, samples: lruEvicting, baseline: writeBase)
        report.add(lruRow)
        report.add(report.row("DiskCacheLevel .adaptive set, 4 KiB, evicting", threads: 1, samples: adaptiveEvicting,
                              baseline: lruRow))
        let unlinkBase = report.row("baseline raw unlink(2), no such file", threads: 1, samples: rawUnlinks)
        report.add(unlinkBase)
        report.add(report.row("DiskCacheLevel remove, key absent (tombstone)", threads: 1, samples: levelRemoves,
                              baseline: unlinkBase))
    }

    func timeOps(_ ops: Int, _ body: (Int) -> Void) -> Double {
        let start = ContinuousClock.now
        for i in 0..<ops { body(i) }
        return Double(ops) / (Double((ContinuousClock.now - start).nanoseconds) / 1e9)
    }

    func timeOpsAsync(_ ops: Int, _ body: (Int) async -> Void) async -> Double {
        let start = ContinuousClock.now
        for i in 0..<ops { await body(i) }
        return Double(ops) / (Double((ContinuousClock.now - start).nanoseconds) / 1e9)
    }
}
