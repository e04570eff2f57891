import Foundation
import NIOCore
import Strata
@testable import StrataRedis
import StrataTestSupport
import Testing

/// Random and mutated replies through ``RESPParser``. Longer runs:
/// `STRATA_FUZZ_ITERATIONS=10000000 STRATA_FUZZ_SEED=7 swift test --filter RESPParserFuzzTests`.
@Suite struct RESPParserFuzzTests {
    /// What feeding some bytes produced: the replies (compared by their
    /// encoding, so that `nan` equals itself) and the error, if any.
    struct Outcome: Equatable {
        var replies = 0
        var encoded: [UInt8] = []
        var error: RESPParseError.Kind?
    }

    static func outcome(_ chunks: [ArraySlice<UInt8>], limits: RESPLimits) -> (Outcome, [RESPValue]) {
        var parser = RESPParser(limits: limits)
        var buffer = ByteBufferAllocator().buffer(capacity: chunks.reduce(0) { $0 + $1.count })
        var outcome = Outcome()
        var values: [RESPValue] = []
        for chunk in chunks {
            chunk.withUnsafeBytes { _ = buffer.writeBytes($0) }
            do {
                while let value = try parser.next(&buffer) {
                    values.append(value)
                    value.write(to: &outcome.encoded)
                }
            } catch {
                outcome.error = error.kind
                break
            }
        }
        outcome.replies = values.count
        return (outcome, values)
    }

    // MARK: Generation

    static let alphabet = Array("+-:$*_#,(!=%~>|\r\n\r\n0123456789-abc:".utf8)

    static func randomBytes(_ count: Int, _ rng: inout SplitMix64) -> [UInt8] {
        return (0..<count).map { _ in rng.next() % 4 == 0 ? UInt8.random(in: 0...255, using: &rng) : alphabet.randomElement(using: &rng)! }
    }

    static func randomValue(_ rng: inout SplitMix64, depth: Int) -> RESPValue {
        func text() -> String { String((0..<Int.random(in: 0...6, using: &rng)).map { _ in "ab:% é\u{0}".randomElement(using: &rng)! }) }
        func bytes() -> ByteBuffer { ByteBuffer(bytes: (0..<Int.random(in: 0...8, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }) }
        func items() -> [RESPValue] { (0..<Int.random(in: 0...3, using: &rng)).map { _ in randomValue(&rng, depth: depth + 1) } }
        func pairs() -> [RESPPair] {
            (0..<Int.random(in: 0...2, using: &rng)).map { _ in
                RESPPair(key: randomValue(&rng, depth: depth + 1), value: randomValue(&rng, depth: depth + 1))
            }
        }
        let scalarKinds = 12, allKinds = depth >= 4 ? scalarKinds : 18
        switch Int.random(in: 0..<allKinds, using: &rng) {
        case 0: return .simpleString(text())
        case 1: return .error("ERR " + text())
        case 2: return .integer(Int.random(in: Int.min...Int.max, using: &rng) >> Int.random(in: 0...63, using: &rng))
        case 3: return .bulkString(bytes())
        case 4: return .bulkString(nil)
        case 5: return .array(nil)
        case 6: return .null
        case 7: return .boolean(Bool.random(using: &rng))
        case 8: return .double([0.5, -2, .infinity, -.infinity, .nan, 1e300, 3.14159][Int.random(in: 0...6, using: &rng)])
        case 9: return .bigNumber((Bool.random(using: &rng) ? "-" : "") + String(UInt64.random(in: 0...UInt64.max, using: &rng)) + "123456789")
        case 10: return .blobError(bytes())
        case 11: return .verbatimString(format: "txt", text: bytes())
        case 12, 13: return .array(items())
        case 14: return .map(pairs())
        case 15: return .set(items())
        case 16: return .push(items())
        default: return .attributed(attributes: pairs(), value: randomValue(&rng, depth: depth + 1))
        }
    }

    static func validEncoding(_ rng: inout SplitMix64) -> [UInt8] {
        var bytes: [UInt8] = []
        for _ in 0..<Int.random(in: 1...3, using: &rng) { randomValue(&rng, depth: 0).write(to: &bytes) }
        return bytes
    }

    static let lengthTypes = Array("$*%~>|=!".utf8)

    /// Replaces the number after a random length-bearing type byte.
    static func replaceLength(_ input: inout [UInt8], with number: String, _ rng: inout SplitMix64) {
        let lengthTypes = Self.lengthTypes
        guard !input.isEmpty else { return }
        // The first length-bearing type byte from a random position on, wrapping around.
        let from = Int.random(in: 0..<input.count, using: &rng)
        guard let start = input[from...].firstIndex(where: lengthTypes.contains)
            ?? input[..<from].firstIndex(where: lengthTypes.contains) else { return }
        var end = start + 1
        while end < input.count, input[end] != UInt8(ascii: "\r") { end += 1 }
        input.replaceSubrange((start + 1)..<end, with: Array(number.utf8))
    }

    static func mutate(_ input: inout [UInt8], _ corpus: [[UInt8]], _ rng: inout SplitMix64) {
        for _ in 0..<Int.random(in: 1...3, using: &rng) {
            let position = input.isEmpty ? 0 : Int.random(in: 0..<input.count, using: &rng)
            switch Int.random(in: 0..<9, using: &rng) {
            case 0 where !input.isEmpty: input[position] ^= UInt8(1) << UInt8.random(in: 0...7, using: &rng)
            case 1 where !input.isEmpty: input[position] = UInt8.random(in: 0...255, using: &rng)
            case 2: input.removeLast(Int.random(in: 0...input.count, using: &rng))  // truncate
            case 3:  // splice in a piece of another reply
                let other = corpus.randomElement(using: &rng)!
                let from = Int.random(in: 0...other.count, using: &rng)
                let piece = other[from..<Int.random(in: from...other.count, using: &rng)]
                input.insert(contentsOf: piece, at: Int.random(in: 0...input.count, using: &rng))
            case 4 where !input.isEmpty:  // delete a range
                input.removeSubrange(position..<Int.random(in: position...input.count, using: &rng))
            case 5:
                let huge = ["99999999999999999999", "9223372036854775807", "536870913", "4294967296", "16777217", "100000"]
                replaceLength(&input, with: huge.randomElement(using: &rng)!, &rng)
            case 6:
                replaceLength(&input, with: ["-1", "-2", "-0", "-9223372036854775808", "+3"].randomElement(using: &rng)!, &rng)
            case 7:  // wrap in arrays, up to past the default depth limit
                input.insert(contentsOf: Array(String(repeating: "*1\r\n", count: Bool.random(using: &rng) ? Int.random(in: 1...8, using: &rng) : Int.random(in: 62...66, using: &rng)).utf8), at: 0)
            default:
                input.insert(contentsOf: randomBytes(Int.random(in: 1...4, using: &rng), &rng), at: Int.random(in: 0...input.count, using: &rng))
            }
        }
    }

    /// Valid encodings to mutate, generated once per run (generation costs
    /// more than parsing in a debug build).
    static func corpus(_ rng: inout SplitMix64) -> [[UInt8]] {
        (0..<512).map { _ in validEncoding(&rng) }
    }

    static func input(_ corpus: [[UInt8]], _ rng: inout SplitMix64) -> [UInt8] {
        switch Int.random(in: 0..<10, using: &rng) {
        case 0: return randomBytes(Int.random(in: 0...40, using: &rng), &rng)
        case 1: return corpus.randomElement(using: &rng)!
        case 2: return corpus.randomElement(using: &rng)! + corpus.randomElement(using: &rng)!
        default:
            var bytes = corpus.randomElement(using: &rng)!
            mutate(&bytes, corpus, &rng)
            return bytes
        }
    }

    static func randomSplit(_ bytes: [UInt8], _ rng: inout SplitMix64) -> [ArraySlice<UInt8>] {
        let cuts = (0..<Int.random(in: 1...4, using: &rng)).map { _ in Int.random(in: 0...bytes.count, using: &rng) }.sorted()
        var chunks: [ArraySlice<UInt8>] = [], from = 0
        for cut in cuts + [bytes.count] {
            chunks.append(bytes[from..<cut])
            from = cut
        }
        return chunks
    }

    // MARK: The property

    @Test func randomAndMutatedRepliesParseRoundTripOrFailTypedAndSplitsAgree() async throws {
        try await offThePool {
            let environment = ProcessInfo.processInfo.environment
            let iterations = environment["STRATA_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 100_000
            let seed = environment["STRATA_FUZZ_SEED"].flatMap(UInt64.init) ?? 0x5354_5241_5441  // "STRATA"
            var rng = SplitMix64(seed: seed)
            let corpus = Self.corpus(&rng)
            let small = RESPLimits(maxBulkLength: 64, maxAggregateCount: 8, maxDepth: 5, maxLineLength: 40)
            var parsed = 0, incomplete = 0
            var failed: [RESPParseError.Kind: Int] = [:]
            var problems = 0
            let start = ContinuousClock.now
            for iteration in 0..<iterations where problems < 5 {
                let bytes = Self.input(corpus, &rng)
                let limits = iteration % 2 == 0 ? RESPLimits.default : small
                let (whole, values) = Self.outcome([bytes[...]], limits: limits)
                let (split, _) = Self.outcome(Self.randomSplit(bytes, &rng), limits: limits)
                if split != whole {
                    problems += 1
                    Issue.record("seed \(seed) iteration \(iteration): split differs for \(bytes): \(whole) vs \(split)")
                }
                // Re-encoding round-trips (a long line may grow when invalid UTF-8 is replaced).
                let roomy = RESPLimits(maxBulkLength: limits.maxBulkLength, maxAggregateCount: limits.maxAggregateCount,
                                       maxDepth: limits.maxDepth)
                if !values.isEmpty {
                    let (again, _) = Self.outcome([whole.encoded[...]], limits: roomy)
                    if again.error != nil || again.replies != values.count || again.encoded != whole.encoded {
                        problems += 1
                        Issue.record("seed \(seed) iteration \(iteration): \(bytes) does not round-trip: \(again)")
                    }
                }
                if let error = whole.error { failed[error, default: 0] += 1 } else if values.isEmpty { incomplete += 1 } else { parsed += 1 }
            }
            let elapsed = ContinuousClock.now - start
            print("RESP fuzz: \(iterations) inputs, seed \(seed), \(elapsed): \(parsed) parsed, \(incomplete) incomplete, failed \(failed)")
            #expect(problems == 0)
            // The generator reaches every outcome.
            #expect(parsed > iterations / 10 && incomplete > 0)
            #expect((failed[.malformed] ?? 0) > 0 && (failed[.tooLarge] ?? 0) > 0 && (failed[.tooDeep] ?? 0) > 0)
        }
    }

    /// Invalidation pushes with random payloads and random key names: the
    /// mapping never traps, and a name it accepts as a key of the level is
    /// exactly that key's Redis name.
    @Test func randomInvalidationPushesMapOnlyToKeysThatRoundTrip() async {
        await offThePool {
            var rng = SplitMix64(seed: 0x494E_5641_4C49)  // "INVALI"
            let prefix = Array("app:".utf8)
            var keys = 0, accepted = 0
            for _ in 0..<20_000 {
                var names: [RESPValue] = (0..<Int.random(in: 0...4, using: &rng)).map { _ in
                    let body = (0..<Int.random(in: 0...8, using: &rng)).map { _ in Array("a:%3A25x".utf8).randomElement(using: &rng)! }
                    return .bulkString(ByteBuffer(bytes: (Bool.random(using: &rng) ? prefix : []) + body))
                }
                names.append(Self.randomValue(&rng, depth: 3))
                let payload: RESPValue = Bool.random(using: &rng) ? .array(names) : Self.randomValue(&rng, depth: 1)
                for invalidation in RedisInvalidationSubscriber.invalidations(in: .push([.bulkString(ByteBuffer(string: "invalidate")), payload])) {
                    guard case .key(let name) = invalidation else { continue }
                    keys += 1
                    guard let key = RedisKeyLayout.escaped.keyBytes(name, prefix: prefix) else { continue }
                    accepted += 1
                    #expect(RedisKeyLayout.escaped.name(of: key, prefix: prefix) == name, "\(name)")
                    #expect(RedisKeyLayout.natural.keyBytes(name, prefix: prefix).map { prefix + $0 } == name, "\(name)")
                }
            }
            #expect(keys > 1000 && accepted > 100 && accepted < keys)
        }
    }
}
