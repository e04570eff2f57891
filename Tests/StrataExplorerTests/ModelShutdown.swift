import StrataExplorer

extension ExplorerModel {
    /// Runs `body`, then shuts the model down (its workload stopped, its disk
    /// levels retired and their temporary directories deleted), also when
    /// `body` throws: a test's `defer` cannot await the shutdown.
    func withShutdown<T>(_ body: () async throws -> T) async rethrows -> T {
        do {
            let result = try await body()
            await shutdown()
            return result
        } catch {
            await shutdown()
            throw error
        }
    }
}
