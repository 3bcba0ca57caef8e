/*
 * Test-only launcher of a Hive Metastore 2.3.9 Thrift server (jars from the pyspark wheel).
 *
 * The metastore's schema auto-creation does not make Hive's transaction tables (HIVE_LOCKS,
 * TXNS, ...), without which every lock/show_locks call fails; TxnDbUtil.prepDb creates them in
 * the same embedded Derby database (configured by hive-site.xml on the classpath). On a restart
 * over an existing database the tables are already there and prepDb's complaint is ignored.
 */

import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStore;
import org.apache.hadoop.hive.metastore.txn.TxnDbUtil;

public final class HmsLauncher {

    private HmsLauncher() {}

    public static void main(String[] args) throws Throwable {
        try {
            TxnDbUtil.prepDb(new HiveConf());
        } catch (Exception e) {
            if (String.valueOf(e.getMessage()).contains("already exists")) {
                System.err.println("hms-launcher: transaction tables already exist");
            } else {
                throw e;
            }
        }
        HiveMetaStore.main(args);
    }
}
