// What the errors without a message of their own say when printed: words
// naming what went wrong, never Swift's default dump of the case.

extension FetchError: CustomStringConvertible {
    /// One line naming the level, the key and why: `memory + disk: get user:7:
    /// no level had a value`, or each failure (`disk: get user:7 failed: …`).
    public var description: String {
        let subject = level.isEmpty && key.isEmpty ? "" : "\(level.isEmpty ? "" : "\(level): ")get \(key): "
        switch reason {
        case .valueNotInCache: return subject.isEmpty ? "no level had a value for the key" : subject + "no level had a value"
        case .conditionNotSatisfied: return subject + "a condition declined the value"
        case .levelsFailed:
            if failures.count == 1, failures[0].level == level || level.isEmpty { return failures[0].description }
            let each = failures.map { failure in
                "\(failure.level)\(failure.operation == .get ? "" : " (\(failure.operation.rawValue))"): \(failure.underlying)"
            }
            let head = "\(level.isEmpty ? "" : "\(level): ")get \(key) failed in "
            return head + (failures.count == 1 ? each[0] : "\(failures.count) levels: " + each.joined(separator: "; "))
        }
    }
}

extension BatchError: CustomStringConvertible {
    /// The two counts that did not match, in words.
    public var description: String {
        switch self {
        case .countMismatch(let values, let keys): "a batch set got \(values) values for \(keys) keys"
        }
    }
}

extension MemoryCacheError: CustomStringConvertible {
    /// The cost (and the capacity) of the value that was not stored, in words.
    public var description: String {
        switch self {
        case .valueTooLarge(let cost, let capacity):
            "the value (cost \(cost)) is larger than the memory level's whole capacity (\(capacity)); not stored"
        case .negativeCost(let cost): "the cost closure returned \(cost) (negative); not stored"
        }
    }
}

extension ImageTransformerError: CustomStringConvertible {
    /// Why the bytes are no image, in words, naming the format of a truncated one.
    public var description: String {
        switch self {
        case .notAnImage: "the bytes are not a PNG, JPEG, GIF or WebP image"
        case .truncated(let format): "the \(format.rawValue.uppercased()) image is truncated"
        }
    }
}

extension BackfillDeclined: CustomStringConvertible {
    /// `back-fill declined: …`, saying the level holds a newer value.
    public var description: String { "back-fill declined: the level holds a value written, or a remove made, since the read began" }
}
