import Foundation
@testable import StrataExplorer
import Testing

/// The error `PipelineFile.parse` throws for `text`; `nil` if it parses
/// (recorded as an issue unless `mayParse`) or throws something else (recorded).
func pipelineFileError(_ text: String, file: String = "test.yaml", mayParse: Bool = false) -> PipelineFileError? {
    do {
        _ = try PipelineFile.parse(text, file: file)
        if !mayParse { Issue.record("expected an error") }
        return nil
    } catch let error as PipelineFileError {
        return error
    } catch {
        Issue.record("unexpected \(error)")
        return nil
    }
}
