/// A column of the key inspector's table; `s` sorts by the next one.
public enum InspectorColumn: String, CaseIterable, Equatable, Sendable {
    case key, size, age, ttl, hits, frequency

    /// The header text.
    public var title: String {
        switch self {
        case .key: "key"
        case .size: "size"
        case .age: "age"
        case .ttl: "ttl left"
        case .hits: "hits"
        case .frequency: "freq"
        }
    }

    /// The column after this one, wrapping.
    public var next: InspectorColumn {
        let all = Self.allCases
        return all[(all.firstIndex(of: self)! + 1) % all.count]
    }
}
