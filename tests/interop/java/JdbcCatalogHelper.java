/*
 * Test-only catalog calls for the JDBC (and any other) catalog of a spec, see
 * PaimonTestHelper.catalog(spec): names, drop/rename, and holding the catalog's commit lock.
 * Answers are JSON text.
 */

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogLock;
import org.apache.paimon.catalog.CatalogLockFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

public final class JdbcCatalogHelper {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private JdbcCatalogHelper() {}

    /** listDatabases as the catalog answers it (Java 0.9's JDBC catalog repeats names). */
    public static String listDatabases(String spec) throws Exception {
        return MAPPER.writeValueAsString(PaimonTestHelper.catalog(spec).listDatabases());
    }

    public static String listTables(String spec, String db) throws Exception {
        return MAPPER.writeValueAsString(PaimonTestHelper.catalog(spec).listTables(db));
    }

    /** getTable succeeds (catalog row AND schema on storage) -> the table's path, else null. */
    public static String tablePath(String spec, String db, String table) throws Exception {
        try {
            org.apache.paimon.table.Table t =
                    PaimonTestHelper.catalog(spec).getTable(Identifier.create(db, table));
            return ((org.apache.paimon.table.FileStoreTable) t).location().toString();
        } catch (Catalog.TableNotExistException e) {
            return null;
        }
    }

    public static void createDatabase(String spec, String db, String propertiesJson) throws Exception {
        Map<String, String> props = new TreeMap<>();
        Iterator<Map.Entry<String, JsonNode>> it = MAPPER.readTree(propertiesJson).fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            props.put(e.getKey(), e.getValue().asText());
        }
        PaimonTestHelper.catalog(spec).createDatabase(db, false, props);
    }

    public static String databaseProperties(String spec, String db) throws Exception {
        return MAPPER.writeValueAsString(
                new TreeMap<>(PaimonTestHelper.catalog(spec).loadDatabaseProperties(db)));
    }

    public static void dropDatabase(String spec, String db, boolean cascade) throws Exception {
        PaimonTestHelper.catalog(spec).dropDatabase(db, false, cascade);
    }

    public static void dropTable(String spec, String db, String table) throws Exception {
        PaimonTestHelper.catalog(spec).dropTable(Identifier.create(db, table), false);
    }

    public static void renameTable(String spec, String fromDb, String fromTable, String toDb, String toTable)
            throws Exception {
        PaimonTestHelper.catalog(spec)
                .renameTable(Identifier.create(fromDb, fromTable), Identifier.create(toDb, toTable), false);
    }

    /**
     * Take the catalog's commit lock of db.table (the CatalogLock Java's commits use), hold it
     * for holdMillis, release it. Returns [millis the acquire started, acquired, released]
     * (epoch millis). Fails if the catalog has no lock (lock.enabled unset/false).
     */
    public static String holdLock(String spec, String db, String table, long holdMillis) throws Exception {
        Catalog catalog = PaimonTestHelper.catalog(spec);
        CatalogLockFactory factory =
                catalog.lockFactory()
                        .orElseThrow(() -> new IllegalStateException("catalog has no lock: " + spec));
        long start = System.currentTimeMillis();
        List<Long> times = new ArrayList<>();
        times.add(start);
        try (CatalogLock lock = factory.createLock(catalog.lockContext().orElse(null))) {
            Callable<Void> hold =
                    () -> {
                        times.add(System.currentTimeMillis());
                        Thread.sleep(holdMillis);
                        return null;
                    };
            lock.runWithLock(db, table, hold);
        }
        times.add(System.currentTimeMillis());
        return MAPPER.writeValueAsString(times);
    }
}
