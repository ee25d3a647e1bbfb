// golden test header
skid_buffer_w8.sv
