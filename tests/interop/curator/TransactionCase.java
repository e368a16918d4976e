import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.api.transaction.OperationType;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

/**
 * Curator transactions (`multi`): all ops applied with their results (a sequential create's
 * name, setData's stat), and a transaction whose version check fails applies nothing.
 */
final class TransactionCase implements Check.Case {
    @Override
    public String name() {
        return "transactions";
    }

    @Override
    public void run(String connect) throws Exception {
        String base = Check.base("transaction");
        CuratorFramework client = Check.client(connect);
        try {
            client.create().creatingParentsIfNeeded().forPath(base + "/config", bytes("v0"));
            List<CuratorOp> ops = List.of(
                    client.transactionOp().check().withVersion(0).forPath(base + "/config"),
                    client.transactionOp().setData().forPath(base + "/config", bytes("v1")),
                    client.transactionOp().create().withMode(CreateMode.PERSISTENT_SEQUENTIAL).forPath(base + "/item-", bytes("x")),
                    client.transactionOp().create().forPath(base + "/gone"),
                    client.transactionOp().delete().forPath(base + "/gone"));
            List<CuratorTransactionResult> results = client.transaction().forOperations(ops);
            Check.equal(5, results.size(), "results of a transaction of five ops");
            Check.equal(OperationType.CHECK, results.get(0).getType(), "first result's type");
            Check.equal(1, results.get(1).getResultStat().getVersion(), "setData's new version");
            String item = results.get(2).getResultPath();
            Check.that(item.matches(java.util.regex.Pattern.quote(base) + "/item-\\d{10}"),
                    "a sequential create's result path: " + item);
            Check.that(client.checkExists().forPath(base + "/gone") == null, "created and deleted in one transaction");

            try {
                client.transaction().forOperations(
                        client.transactionOp().create().forPath(base + "/never"),
                        client.transactionOp().check().withVersion(0).forPath(base + "/config"));
                throw new Check.Failed("a transaction with a stale version check went through");
            } catch (KeeperException.BadVersionException expected) {
                // The whole transaction is rolled back.
            }
            Check.that(client.checkExists().forPath(base + "/never") == null, "a failed transaction applies nothing");
            Check.equal("v1", new String(client.getData().forPath(base + "/config"), StandardCharsets.UTF_8),
                    "the data after the failed transaction");
        } finally {
            client.close();
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
