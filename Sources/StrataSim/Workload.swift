/// A generated request sequence, named by a spec such as `zipf:100000:0.99:1000000`.
///
/// - `zipf:ITEMS:THETA:REQUESTS`: keys drawn from ``ZipfDistribution``
///   (inverse CDF, scrambled keys).
/// - `loop:KEYS:REQUESTS`: keys `0, 1, …, KEYS-1, 0, 1, …` (LRU's worst case
///   when KEYS exceeds the cache).
/// - `scan:ITEMS:THETA:SCAN:REQUESTS`: Zipf traffic in which every SCAN
///   requests are followed by a sequential scan of SCAN keys that are never
///   requested again (a one-time scan pollutes a recency cache).
///
/// Numbers may use `_` separators (`1_000_000`). The same spec and seed give
/// the same requests.
public enum Workload: Sendable, Equatable {
    case zipf(items: Int, theta: Double, requests: Int)
    case loop(keys: Int, requests: Int)
    case scan(items: Int, theta: Double, scanLength: Int, requests: Int)

    /// The most requests or items a workload may have (memory is 8 bytes each).
    public static let limit = 100_000_000

    /// The spec forms, for help texts.
    public static let forms = ["zipf:ITEMS:THETA:REQUESTS", "loop:KEYS:REQUESTS", "scan:ITEMS:THETA:SCAN:REQUESTS"]

    /// A spec that could not be parsed.
    public struct SpecError: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// Whether `text` is meant as a workload spec (rather than a file name).
    public static func looksLikeSpec(_ text: String) -> Bool {
        ["zipf:", "loop:", "scan:"].contains { text.hasPrefix($0) }
    }

    /// Parses a spec; the error explains the expected form.
    public init(spec: String) throws {
        let parts = spec.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        func fail(_ why: String) -> SpecError {
            let form = Self.forms.first { $0.hasPrefix(parts[0] + ":") } ?? Self.forms.joined(separator: ", ")
            return SpecError(description: "workload \"\(spec)\": \(why) (expected \(form))")
        }
        func count(_ text: String, _ what: String) throws -> Int {
            guard let value = Int(text.replacingOccurrences(of: "_", with: "")), value >= 1 else {
                throw fail("\(what) must be a positive integer, found \"\(text)\"")
            }
            guard value <= Self.limit else { throw fail("\(what) must be at most \(Self.limit)") }
            return value
        }
        func exponent(_ text: String) throws -> Double {
            guard let value = Double(text), value.isFinite, value >= 0, value <= 10 else {
                throw fail("THETA must be a number from 0 to 10, found \"\(text)\"")
            }
            return value
        }
        switch parts[0] {
        case "zipf":
            guard parts.count == 4 else { throw fail("wrong number of fields") }
            self = .zipf(items: try count(parts[1], "ITEMS"), theta: try exponent(parts[2]),
                         requests: try count(parts[3], "REQUESTS"))
        case "loop":
            guard parts.count == 3 else { throw fail("wrong number of fields") }
            self = .loop(keys: try count(parts[1], "KEYS"), requests: try count(parts[2], "REQUESTS"))
        case "scan":
            guard parts.count == 5 else { throw fail("wrong number of fields") }
            self = .scan(items: try count(parts[1], "ITEMS"), theta: try exponent(parts[2]),
                         scanLength: try count(parts[3], "SCAN"), requests: try count(parts[4], "REQUESTS"))
        default:
            throw SpecError(description: "workload \"\(spec)\": unknown kind \"\(parts[0])\" (expected \(Self.forms.joined(separator: ", ")))")
        }
    }

    /// The spec, in canonical form.
    public var spec: String {
        switch self {
        case .zipf(let items, let theta, let requests): "zipf:\(items):\(theta):\(requests)"
        case .loop(let keys, let requests): "loop:\(keys):\(requests)"
        case .scan(let items, let theta, let scan, let requests): "scan:\(items):\(theta):\(scan):\(requests)"
        }
    }

    /// The requests, generated from `seed` (every object has size 1).
    public func trace(seed: UInt64, name: String? = nil) -> Trace {
        var generator = SeededGenerator(seed: seed)
        var keys: [Int] = []
        switch self {
        case .zipf(let items, let theta, let requests):
            let zipf = ZipfDistribution(items: items, theta: theta)
            keys.reserveCapacity(requests)
            for _ in 0..<requests { keys.append(ZipfDistribution.key(forRank: zipf.nextRank(using: &generator))) }
        case .loop(let count, let requests):
            keys = (0..<requests).map { $0 % count }
        case .scan(let items, let theta, let scan, let requests):
            let zipf = ZipfDistribution(items: items, theta: theta)
            keys.reserveCapacity(requests)
            var scanned = 0
            while keys.count < requests {
                for _ in 0..<min(scan, requests - keys.count) {
                    keys.append(ZipfDistribution.key(forRank: zipf.nextRank(using: &generator)))
                }
                for _ in 0..<min(scan, requests - keys.count) {
                    scanned += 1
                    keys.append(-scanned)  // Zipf keys are never negative
                }
            }
        }
        return Trace(name: name ?? spec, keys: keys)
    }
}
