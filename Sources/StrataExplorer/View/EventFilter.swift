import Foundation

/// The event log's `/` filter: the lines that contain the text, ignoring case.
public enum EventFilter {
    public static func apply(_ filter: String?, to events: [EventLine]) -> [EventLine] {
        guard let filter, !filter.isEmpty else { return events }
        return events.filter { $0.text.range(of: filter, options: .caseInsensitive) != nil }
    }
}
