import Foundation
#if canImport(Glibc)
import Glibc
#endif
import StrataTestSupport
import Testing

/// The test support's cluster: three masters on loopback, healthy, and gone once killed.
@Suite struct RedisClusterSupportTests {
    @Test func clusterSupportStartsThreeHealthyMastersAndLeavesNoProcess() async throws {
        let cluster = try await RedisCluster(masters: 3)
        let pids = cluster.nodes.map(\.process.processIdentifier)
        for address in cluster.addresses {
            let port = String(address.split(separator: ":")[1])
            let info = try await RedisCluster.cli(["-p", port, "CLUSTER", "INFO"])
            #expect(info.contains("cluster_state:ok") && info.contains("cluster_size:3"), "\(address): \(info.prefix(200))")
        }
        await cluster.kill()
        for pid in pids { #expect(kill(pid, 0) != 0, "node \(pid) still runs") }
    }
}
